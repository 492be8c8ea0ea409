import { readFileSync, existsSync } from 'node:fs';
import { resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseNpy, type NpyArray } from '../npy/npy.js';

/**
 * Locates `../shared` (golden vectors, reference models) beside the project root. Tests read shared
 * material from there and never copy it into the project.
 */
const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export function sharedDir(): string {
  return process.env['KVSCOPE_SHARED_DIR'] ?? resolve(projectRoot, '..', 'shared');
}

export function goldenPath(...parts: string[]): string {
  return resolve(sharedDir(), 'golden', ...parts);
}

export function hasShared(): boolean {
  return existsSync(goldenPath('manifest.json'));
}

export function readNpyFile(path: string): NpyArray {
  return parseNpy(readFileSync(path), path);
}
