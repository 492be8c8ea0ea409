import { statSync } from 'node:fs';
import type { DecoderSession } from '../../engine/decoder-session.js';
import { createOrtDecoderSession, type OrtDecoderSessionOptions } from './ort-decoder-session.js';

/** A session lent to one run; `release` hands it back (kept warm for the next run, or disposed). */
export interface LeasedSession {
  readonly session: DecoderSession;
  release(): Promise<void>;
}

/** Sessions lent to one run together (the legacy Optimum pair: prefill and decode graphs). */
export interface LeasedSessions {
  readonly sessions: readonly DecoderSession[];
  release(): Promise<void>;
}

/** One graph of a group: its path and how messages name it. */
export interface GraphToOpen {
  readonly path: string;
  /** default: the path */
  readonly displayName?: string;
}

interface Idle {
  readonly key: string;
  readonly sessions: readonly DecoderSession[];
}

/**
 * Keeps the most recently used session warm between runs in this process (one idle session at most,
 * so a large model is not held twice). A session carries no state between runs (the cache lives in
 * the feeds), and a warm one decodes faster: its memory arena already has the buffers a run grows
 * into (a fresh stories260k session runs ~10-15% slower than the minimal loop's warm session,
 * generation-speed.md), and the next run on the same model skips loading it. A session busy in one
 * run is never lent to another; a second concurrent run gets its own, disposed on release. A group
 * (the two graphs of a legacy decoder pair) is kept and lent as one.
 */
let idle: Idle | null = null;
const busy = new Set<DecoderSession>();

export async function leaseDecoderSession(onnxPath: string, options: OrtDecoderSessionOptions): Promise<LeasedSession> {
  const { displayName, ...common } = options;
  const lease = await leaseDecoderSessions([displayName === undefined ? { path: onnxPath } : { path: onnxPath, displayName }], common);
  return { session: lease.sessions[0]!, release: lease.release };
}

/** Leases sessions for several graphs as one group (created in order; all or none). */
export async function leaseDecoderSessions(
  graphs: readonly GraphToOpen[], options: Omit<OrtDecoderSessionOptions, 'displayName'>,
): Promise<LeasedSessions> {
  const key = groupKey(graphs, options);
  let sessions: readonly DecoderSession[];
  if (idle !== null && idle.key === key) {
    sessions = idle.sessions;
    idle = null;
  } else {
    // A different model: let the idle one go before loading the next, so both are never resident.
    await releaseCachedSessions();
    sessions = await createAll(graphs, options);
  }
  for (const session of sessions) busy.add(session);
  let released = false;
  return {
    sessions,
    release: async () => {
      if (released) return;
      released = true;
      for (const session of sessions) busy.delete(session);
      if (idle === null) {
        idle = { key, sessions };
        return;
      }
      await Promise.all(sessions.map((session) => session.dispose()));
    },
  };
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

/** Disposes the idle session, if any (tests call it in afterAll; a host when it frees memory). */
export async function releaseCachedSessions(): Promise<void> {
  const current = idle;
  idle = null;
  await Promise.all((current?.sessions ?? []).map((session) => session.dispose()));
}

/** Sessions lent out right now (for tests that check nothing leaks). */
export function leasedSessionCount(): number {
  return busy.size;
}

/** The files' identity too: a graph rewritten in place must not reuse the old session. */
function groupKey(graphs: readonly GraphToOpen[], options: Omit<OrtDecoderSessionOptions, 'displayName'>): string {
  return JSON.stringify([
    graphs.map((graph) => {
      const { size, mtimeMs } = statSync(graph.path);
      return [graph.path, size, mtimeMs, graph.displayName ?? null];
    }),
    options.executionProvider, options.intraOpNumThreads ?? null, options.disabledOptimizers ?? null, options.externalDataFolder ?? null,
  ]);
}
