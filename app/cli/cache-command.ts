import { stringifyJson } from '../protocol/json-numbers.js';
import { formatBytes, parseByteSize } from './byte-size.js';
import { ExitCode, UsageError, type CliIo } from './io.js';
import { optionalString, type RawOptions } from './options.js';

/** One entry of one of kvscope's cache folders. */
export interface CacheEntry {
  /** the entry's name in its folder (a content key, or a synthetic model's folder name) */
  readonly name: string;
  /** what it is, for people: "reference of <model>/<graph>, text …, 6 windows of 512" */
  readonly what: string;
  /** bytes it takes on disk; files hard-linked to a model's own files are in `linkedBytes` instead */
  readonly bytes: number;
  /** bytes of files shared with another path by a hard link (an in-graph rewrite's weights): no space of their own */
  readonly linkedBytes: number;
  /** last use (eval references: touched by every evaluation that reads them), else the last write, ms since the epoch */
  readonly lastUsedMs: number;
}

export interface CacheFolder {
  /** `eval-references`, `derived-graphs`, `models`; an older kvscope's `in-graph`, `reference-graphs` */
  readonly name: string;
  readonly path: string;
  /** true for the eval references and the derived graphs: `prune` and the size cap remove from them; the others are listed only */
  readonly managed: boolean;
  /** the folder's own cap, where it is not the eval references' (runtime.maxBytes) */
  readonly maxBytes?: number;
  /** a folder an older kvscope wrote and this one no longer reads: listed, and removed whole by any prune */
  readonly stale?: boolean;
  readonly entries: readonly CacheEntry[];
}

/** What `kvscope cache` needs from the host (Node's: main/cli/node-cache-runtime.ts). */
export interface CacheCommandRuntime {
  /** kvscope's cache folder (`$KVSCOPE_CACHE_DIR`, else ~/.cache/kvscope) */
  readonly root: string;
  /** the eval references' size cap (KVSCOPE_CACHE_MAX_BYTES, default 20 GiB) */
  readonly maxBytes: number;
  list(): readonly CacheFolder[];
  /** removes one entry of a managed folder */
  remove(folder: string, name: string): void;
  now(): number;
}

/**
 * `kvscope cache list`: every entry of kvscope's cache folders (eval references, derived graphs; the
 * synthetic models, listed only; an older kvscope's folders, marked stale), with size and last use.
 * `kvscope cache prune --older-than 30d | --max-size 10G [--dry-run]`: removes eval references and
 * derived graphs not used for that long, and/or the least recently used ones until together they are
 * within that size, and an older kvscope's folders whole. An entry removed is computed again by the
 * next evaluation or run that needs it; nothing else is lost.
 */
export function runCacheCommand(positionals: readonly string[], options: RawOptions, io: CliIo, runtime: CacheCommandRuntime): ExitCode {
  const [action, ...extra] = positionals;
  if (extra.length > 0) throw new UsageError(`kvscope cache takes one action, got ${positionals.length}: ${positionals.join(' ')}. Use kvscope cache list or kvscope cache prune.`);
  const json = options['json'] === true;
  if (action === 'list' || action === undefined) {
    const folders = runtime.list();
    io.stdout(json ? `${stringifyJson({ ok: true, root: runtime.root, maxBytes: runtime.maxBytes, folders })}\n` : formatListing(runtime, folders));
    return ExitCode.ok;
  }
  if (action !== 'prune') throw new UsageError(`kvscope cache: unknown action "${action.slice(0, 40)}". Use kvscope cache list or kvscope cache prune.`);
  const olderThan = optionalString(options, 'older-than');
  const maxSize = optionalString(options, 'max-size');
  if (olderThan === undefined && maxSize === undefined) {
    throw new UsageError('kvscope cache prune needs --older-than AGE (e.g. 30d, 12h) and/or --max-size SIZE (e.g. 10G).');
  }
  const ageMs = olderThan === undefined ? null : parseAge(olderThan);
  if (ageMs === null && olderThan !== undefined) throw new UsageError(`--older-than ${JSON.stringify(olderThan.slice(0, 40))} is not an age: use a number with d, h, m or s (e.g. 30d).`);
  const sizeBytes = maxSize === undefined ? null : parseByteSize(maxSize);
  if (sizeBytes === null && maxSize !== undefined) throw new UsageError(`--max-size ${JSON.stringify(maxSize.slice(0, 40))} is not a size: use bytes or a number with K, M, G or T (e.g. 10G).`);
  const managed = runtime.list().filter((folder) => folder.managed);
  // One pool: --older-than and --max-size weigh every managed entry alike; an older kvscope's folders go whole.
  const live = managed.filter((folder) => folder.stale !== true);
  const stale = managed.filter((folder) => folder.stale === true).flatMap((folder) => folder.entries.map((entry) => ({ folder, entry })));
  const owner = new Map(live.flatMap((folder) => folder.entries.map((entry) => [entry, folder] as const)));
  const chosen = [...stale, ...pruneChoice([...owner.keys()], runtime.now(), ageMs, sizeBytes).map((entry) => ({ folder: owner.get(entry)!, entry }))];
  const dryRun = options['dry-run'] === true;
  if (!dryRun) for (const { folder, entry } of chosen) runtime.remove(folder.name, entry.name);
  const sum = (entries: readonly CacheEntry[]): number => entries.reduce((total, entry) => total + entry.bytes, 0);
  const freed = sum(chosen.map(({ entry }) => entry));
  const left = sum(live.flatMap((folder) => folder.entries)) - sum(chosen.filter(({ folder }) => folder.stale !== true).map(({ entry }) => entry));
  if (json) {
    // an eval reference by its key (as before), any other entry as folder/name
    const removed = chosen.map(({ folder, entry }) => (folder.name === 'eval-references' ? entry.name : `${folder.name}/${entry.name}`));
    io.stdout(`${stringifyJson({ ok: true, dryRun, removed, freedBytes: freed, remainingBytes: left })}\n`);
  } else {
    const verb = dryRun ? 'would remove' : 'removed';
    const lines = chosen.map(({ entry }) => `  ${verb} ${entry.name.slice(0, 16)}  ${formatBytes(entry.bytes).padStart(10)}  ${entry.what}`);
    for (const folder of managed) {
      const mine = chosen.filter((choice) => choice.folder === folder).map(({ entry }) => entry);
      // the eval references' line always (as before the derived graphs were managed), the others' where they hold something
      if (folder.name !== 'eval-references' && folder.entries.length === 0) continue;
      const noun = FOLDER_NOUN[folder.name] ?? [`entry of ${folder.name}/`, `entries of ${folder.name}/`];
      const what = `${mine.length} ${mine.length === 1 ? noun[0] : noun[1]}${folder.stale === true ? ' (from an older kvscope, no longer read)' : ''}`;
      lines.push(`kvscope cache: ${verb} ${what} (${formatBytes(sum(mine))}); ${formatBytes(folder.stale === true ? 0 : sum(folder.entries) - sum(mine))} left in ${folder.path}`);
    }
    io.stdout(`${lines.join('\n')}\n`);
  }
  return ExitCode.ok;
}

/** How prune counts a folder's entries, singular and plural. */
const FOLDER_NOUN: Readonly<Record<string, readonly [string, string]>> = {
  'eval-references': ['eval reference', 'eval references'],
  'derived-graphs': ['derived graph', 'derived graphs'],
};

/** The entries prune removes: those unused for `ageMs`, then the least recently used until the rest fits in `sizeBytes`. */
export function pruneChoice(entries: readonly CacheEntry[], nowMs: number, ageMs: number | null, sizeBytes: number | null): CacheEntry[] {
  const oldestFirst = [...entries].sort((a, b) => a.lastUsedMs - b.lastUsedMs);
  const chosen = ageMs === null ? [] : oldestFirst.filter((entry) => nowMs - entry.lastUsedMs > ageMs);
  if (sizeBytes !== null) {
    let total = entries.reduce((sum, entry) => sum + entry.bytes, 0) - chosen.reduce((sum, entry) => sum + entry.bytes, 0);
    for (const entry of oldestFirst) {
      if (total <= sizeBytes) break;
      if (chosen.includes(entry)) continue;
      chosen.push(entry);
      total -= entry.bytes;
    }
  }
  return chosen;
}

/** `30d`, `12h`, `90m`, `45s`, `2w`; null when it is not an age. */
export function parseAge(text: string): number | null {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([wdhms])\s*$/i.exec(text);
  if (match === null) return null;
  const unitMs = { w: 7 * 86_400_000, d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 }[match[2]!.toLowerCase() as 'w' | 'd' | 'h' | 'm' | 's'];
  return Number(match[1]) * unitMs;
}

function formatListing(runtime: CacheCommandRuntime, folders: readonly CacheFolder[]): string {
  const lines = [`kvscope cache: ${runtime.root} (KVSCOPE_CACHE_DIR moves it)`];
  for (const folder of folders) {
    const total = folder.entries.reduce((sum, entry) => sum + entry.bytes, 0);
    const linked = folder.entries.reduce((sum, entry) => sum + entry.linkedBytes, 0);
    const note = folder.stale === true
      ? 'from an older kvscope, no longer read: kvscope cache prune removes it'
      : folder.managed
        ? `capped at ${formatBytes(folder.maxBytes ?? runtime.maxBytes)}${folder.maxBytes === undefined ? ' (KVSCOPE_CACHE_MAX_BYTES)' : ''}, least recently used removed first; kvscope cache prune`
        : 'listed only: rebuilt on demand; remove a folder by hand to reclaim it';
    lines.push('', `${folder.name}/  ${folder.entries.length} entr${folder.entries.length === 1 ? 'y' : 'ies'}, ${formatBytes(total)}` +
      `${linked > 0 ? ` (+ ${formatBytes(linked)} hard-linked to the models' own files)` : ''}  [${note}]`);
    for (const entry of [...folder.entries].sort((a, b) => b.lastUsedMs - a.lastUsedMs)) {
      lines.push(`  ${entry.name.slice(0, 16).padEnd(16)}  ${formatBytes(entry.bytes).padStart(10)}  ${ago(runtime.now() - entry.lastUsedMs).padStart(9)}  ${entry.what}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** `3 min ago`, `5 h ago`, `12 d ago` */
function ago(ms: number): string {
  const minutes = Math.max(0, Math.round(ms / 60_000));
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  return hours < 48 ? `${hours} h ago` : `${Math.round(hours / 24)} d ago`;
}
