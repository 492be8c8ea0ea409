import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { arrayReader, literalReader, readObject } from '../../protocol/field-readers.js';
import { sameModelSource } from '../../protocol/model-source.js';
import { readModelSource } from '../../protocol/parse-api-message.js';
import type { ModelSource } from '../../protocol/workbench-api.js';
import { writeFileAtomic } from '../atomic-write.js';
import { readGuardedTextSync } from '../files/guarded-read.js';
import { describeFsError } from '../fs-errors.js';

export const RECENT_MODELS_FORMAT = 'kvscope-recent-models';
/** Netron keeps 9 (one per Cmd+1…9); the workbench's menu has room for 10. */
export const MAX_RECENT_MODELS = 10;

/**
 * The recently opened models, most recent first, persisted as one small JSON file written
 * atomically (atomic-write.ts), so a crash leaves the old list or the new one. It is a convenience:
 * an unreadable or hand-edited file starts the list empty again, and a data folder that cannot be
 * written (read-only, full, missing) keeps the list in memory and says so, never failing the open
 * that added to it.
 */
export class RecentModels {
  private models: ModelSource[] | undefined;

  constructor(readonly path: string, private readonly onChange?: (models: readonly ModelSource[]) => void) {}

  /** The list, without folders that have since disappeared (Netron prunes missing files the same way). */
  list(): ModelSource[] {
    return this.load().filter((source) => source.kind !== 'folder' || existsSync(source.path));
  }

  /** Puts `source` first. `notSaved` says why the list could not be written (it is kept for this session). */
  add(source: ModelSource): { models: ModelSource[]; notSaved: string | null } {
    const models = [source, ...this.load().filter((other) => !sameModelSource(other, source))].slice(0, MAX_RECENT_MODELS);
    this.models = models;
    let notSaved: string | null = null;
    try {
      mkdirSync(dirname(this.path), { recursive: true });
      writeFileAtomic(this.path, new TextEncoder().encode(JSON.stringify({ format: RECENT_MODELS_FORMAT, version: 1, models }, null, 1) + '\n'));
    } catch (error) {
      notSaved = error instanceof Error && (error as NodeJS.ErrnoException).code === undefined ? error.message : describeFsError(error, dirname(this.path), 'write');
    }
    try {
      this.onChange?.(this.list());
    } catch (error) {
      // A menu that cannot be rebuilt is the host's problem, not the open's.
      console.error(`kvscope: the recent-models listener failed: ${(error as Error).message}`);
    }
    return { models: [...models], notSaved };
  }

  private load(): ModelSource[] {
    this.models ??= readRecentFile(this.path);
    return this.models;
  }
}

function readRecentFile(path: string): ModelSource[] {
  let text: string;
  try {
    text = readGuardedTextSync(path, 'recent-models');
  } catch {
    return [];
  }
  try {
    const fields = readObject(JSON.parse(text), '');
    fields.get('format', literalReader(RECENT_MODELS_FORMAT));
    return fields.get('models', arrayReader(readModelSource)).slice(0, MAX_RECENT_MODELS);
  } catch {
    return [];
  }
}
