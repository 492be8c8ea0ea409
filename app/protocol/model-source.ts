import type { ModelSource } from './workbench-api.js';

/** RunSettings' `model` for a source: the folder path, or the synthetic model's name (the worker builds it). */
export function modelArgument(source: ModelSource): string {
  return source.kind === 'folder' ? source.path : source.kind;
}

export function sameModelSource(a: ModelSource, b: ModelSource): boolean {
  if (a.kind !== b.kind) return false;
  return a.kind !== 'folder' || (b.kind === 'folder' && a.path === b.path);
}
