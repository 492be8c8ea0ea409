import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { arrayReader, literalReader, readObject } from '../../protocol/field-readers.js';
import { sameModelSource } from '../../protocol/model-source.js';
import { readModelSource } from '../../protocol/parse-api-message.js';
import type { ModelSource } from '../../protocol/workbench-api.js';
import { writeFileAtomic } from '../atomic-write.js';

export const RECENT_MODELS_FORMAT = 'kvscope-recent-models';
/** Netron keeps 9 (one per Cmd+1…9); the workbench's menu has room for 10. */
export const MAX_RECENT_MODELS = 10;

/**
 * The recently opened models, most recent first, persisted as one small JSON file written
 * atomically (atomic-write.ts), so a crash leaves the old list or the new one. An unreadable or
 * hand-edited file is not worth an error dialog: the list starts empty again and is rewritten on the
 * next open.
 */
export class RecentModels {
  private models: ModelSource[] | undefined;

  constructor(readonly path: string, private readonly onChange?: (models: readonly ModelSource[]) => void) {}

  /** The list, without folders that have since disappeared (Netron prunes missing files the same way). */
  list(): ModelSource[] {
    return this.load().filter((source) => source.kind !== 'folder' || existsSync(source.path));
  }

  add(source: ModelSource): ModelSource[] {
    const models = [source, ...this.load().filter((other) => !sameModelSource(other, source))].slice(0, MAX_RECENT_MODELS);
    this.models = models;
    mkdirSync(dirname(this.path), { recursive: true });
    writeFileAtomic(this.path, new TextEncoder().encode(JSON.stringify({ format: RECENT_MODELS_FORMAT, version: 1, models }, null, 1) + '\n'));
    this.onChange?.(this.list());
    return [...models];
  }

  private load(): ModelSource[] {
    this.models ??= readRecentFile(this.path);
    return this.models;
  }
}

function readRecentFile(path: string): ModelSource[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
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
