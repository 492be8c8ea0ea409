import { statSync } from 'node:fs';
import type { DecoderSession } from '../../engine/decoder-session.js';
import { createOrtDecoderSession, sessionSharing, type OrtDecoderSessionOptions } from './ort-decoder-session.js';

/** A session lent to one run; `release` hands it back (kept warm for the next run, or disposed). */
export interface LeasedSession {
  readonly session: DecoderSession;
  /** whether the session came warm from this cache (false: it was created for this lease) */
  readonly reused: boolean;
  release(): Promise<void>;
}

/** Sessions lent to one run together (the legacy Optimum pair: prefill and decode graphs). */
export interface LeasedSessions {
  readonly sessions: readonly DecoderSession[];
  /** whether the sessions came warm from this cache (false: they were created for this lease) */
  readonly reused: boolean;
  release(): Promise<void>;
}

/** One graph of a group: its path and how messages name it. */
export interface GraphToOpen {
  readonly path: string;
  /** default: the path */
  readonly displayName?: string;
}

/** What a lease may say beside the sessions' own options. */
export interface LeaseOptions {
  /**
   * The bytes the group holds once created: its graphs and the weights they read (external data
   * included). Default: the graph files' sizes. The cache keeps idle groups within a budget of these.
   */
  readonly residentBytes?: number;
}

interface Idle {
  readonly key: string;
  readonly sessions: readonly DecoderSession[];
  readonly bytes: number;
}

/**
 * Idle groups kept at most, and the bytes they may hold together. A researcher switches between a
 * few settings of one model (bits 4, then 2, then 4 again; quanto, then HQQ): each settings' rewritten
 * graph is a session of its own, so several are kept warm while they are small. A group larger than
 * the budget is still kept alone (the next run on the same model skips loading it), and every other
 * idle group is let go before a group is created that would not fit beside them, so a large model's
 * weights are never resident twice (issue 23: the eval releases the source graph's session before the
 * rewrite's is created, and that must free its weights).
 */
export const MAX_IDLE_GROUPS = 6;
export const IDLE_BUDGET_BYTES = 256 * 1024 * 1024;

/**
 * Keeps recently used sessions warm between runs in this process, most recently released last. A
 * session carries no state between runs (the cache lives in the feeds), and a warm one decodes faster:
 * its memory arena already has the buffers a run grows into (a fresh stories260k session runs ~10-15%
 * slower than the minimal loop's warm session, generation-speed.md), and the next run on the same
 * graph skips loading it. A session busy in one run is never lent to another; a second concurrent
 * run gets its own, disposed on release. A group (the two graphs of a legacy decoder pair) is kept
 * and lent as one.
 */
const idle: Idle[] = [];
const busy = new Set<DecoderSession>();

export async function leaseDecoderSession(onnxPath: string, options: OrtDecoderSessionOptions & LeaseOptions): Promise<LeasedSession> {
  const { displayName, ...common } = options;
  const lease = await leaseDecoderSessions([displayName === undefined ? { path: onnxPath } : { path: onnxPath, displayName }], common);
  return { session: lease.sessions[0]!, reused: lease.reused, release: lease.release };
}

/** Leases sessions for several graphs as one group (created in order; all or none). */
export async function leaseDecoderSessions(
  graphs: readonly GraphToOpen[], options: Omit<OrtDecoderSessionOptions, 'displayName'> & LeaseOptions,
): Promise<LeasedSessions> {
  const { residentBytes, ...sessionOptions } = options;
  const key = groupKey(graphs, sessionOptions);
  const bytes = residentBytes ?? graphs.reduce((sum, graph) => sum + statSync(graph.path).size, 0);
  let sessions: readonly DecoderSession[];
  const warm = idle.findIndex((entry) => entry.key === key);
  const reused = warm >= 0;
  if (reused) {
    sessions = idle.splice(warm, 1)[0]!.sessions;
  } else {
    // Make room first, so the group being created and the idle ones never exceed the budget together.
    await evictIdle(Math.max(0, MAX_IDLE_GROUPS - 1), IDLE_BUDGET_BYTES - bytes);
    sessions = await createAll(graphs, sessionOptions);
  }
  for (const session of sessions) busy.add(session);
  let released = false;
  return {
    sessions,
    reused,
    release: async () => {
      if (released) return;
      released = true;
      for (const session of sessions) busy.delete(session);
      // a concurrent run's second copy of a group already idle is not kept twice
      if (idle.some((entry) => entry.key === key)) {
        await Promise.all(sessions.map((session) => session.dispose()));
        return;
      }
      idle.push({ key, sessions, bytes });
      // the group just released stays (even alone over the budget); the least recently used go first
      await evictIdle(MAX_IDLE_GROUPS, Math.max(IDLE_BUDGET_BYTES, bytes), idle.length - 1);
    },
  };
}

/**
 * Disposes the least recently used idle groups until at most `maxGroups` are idle and they hold at
 * most `maxBytes` together; the group at `keep` (an index into `idle`) is never disposed.
 */
async function evictIdle(maxGroups: number, maxBytes: number, keep = -1): Promise<void> {
  const kept = keep >= 0 ? idle[keep] : undefined;
  const gone: Idle[] = [];
  const total = (): number => idle.reduce((sum, entry) => sum + entry.bytes, 0);
  while (idle.length > 0 && (idle.length > maxGroups || total() > maxBytes)) {
    const index = idle[0] === kept ? 1 : 0;
    if (index >= idle.length) break;
    gone.push(...idle.splice(index, 1));
  }
  await Promise.all(gone.flatMap((entry) => entry.sessions.map((session) => session.dispose())));
}

async function createAll(graphs: readonly GraphToOpen[], options: Omit<OrtDecoderSessionOptions, 'displayName'>): Promise<DecoderSession[]> {
  const sessions: DecoderSession[] = [];
  try {
    for (const graph of graphs) {
      sessions.push(await createOrtDecoderSession(graph.path, graph.displayName === undefined ? options : { ...options, displayName: graph.displayName }));
    }
    return sessions;
  } catch (error) {
    await Promise.all(sessions.map((session) => session.dispose()));
    throw error;
  }
}

/** Disposes every idle session (tests call it in afterAll; a host when it frees memory). */
export async function releaseCachedSessions(): Promise<void> {
  const current = idle.splice(0);
  await Promise.all(current.flatMap((entry) => entry.sessions.map((session) => session.dispose())));
}

/** Sessions lent out right now (for tests that check nothing leaks). */
export function leasedSessionCount(): number {
  return busy.size;
}

/** Groups kept idle right now (for tests). */
export function idleGroupCount(): number {
  return idle.length;
}

/** The files' identity too: a graph rewritten in place must not reuse the old session. */
function groupKey(graphs: readonly GraphToOpen[], options: Omit<OrtDecoderSessionOptions, 'displayName'>): string {
  return JSON.stringify([
    graphs.map((graph) => {
      const { size, mtimeMs } = statSync(graph.path);
      return [graph.path, size, mtimeMs, graph.displayName ?? null];
    }),
    options.executionProvider, options.intraOpNumThreads ?? null, options.disabledOptimizers ?? null, options.externalDataFolder ?? null,
    sessionSharing(),
  ]);
}
