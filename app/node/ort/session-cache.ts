import { statSync } from 'node:fs';
import type { DecoderSession } from '../../engine/decoder-session.js';
import { createOrtDecoderSession, type OrtDecoderSessionOptions } from './ort-decoder-session.js';

/** A session lent to one run; `release` hands it back (kept warm for the next run, or disposed). */
export interface LeasedSession {
  readonly session: DecoderSession;
  release(): Promise<void>;
}

interface Idle {
  readonly key: string;
  readonly session: DecoderSession;
}

/**
 * Keeps the most recently used session warm between runs in this process (one idle session at most,
 * so a large model is not held twice). A session carries no state between runs (the cache lives in
 * the feeds), and a warm one decodes faster: its memory arena already has the buffers a run grows
 * into (a fresh stories260k session runs ~10-15% slower than the minimal loop's warm session,
 * generation-speed.md), and the next run on the same model skips loading it. A session busy in one
 * run is never lent to another; a second concurrent run gets its own, disposed on release.
 */
let idle: Idle | null = null;
const busy = new Set<DecoderSession>();

export async function leaseDecoderSession(onnxPath: string, options: OrtDecoderSessionOptions): Promise<LeasedSession> {
  const key = sessionKey(onnxPath, options);
  let session: DecoderSession;
  if (idle !== null && idle.key === key) {
    session = idle.session;
    idle = null;
  } else {
    // A different model: let the idle one go before loading the next, so both are never resident.
    await releaseCachedSessions();
    session = await createOrtDecoderSession(onnxPath, options);
  }
  busy.add(session);
  let released = false;
  return {
    session,
    release: async () => {
      if (released) return;
      released = true;
      busy.delete(session);
      if (idle === null) {
        idle = { key, session };
        return;
      }
      await session.dispose();
    },
  };
}

/** Disposes the idle session, if any (tests call it in afterAll; a host when it frees memory). */
export async function releaseCachedSessions(): Promise<void> {
  const current = idle;
  idle = null;
  await current?.session.dispose();
}

/** Sessions lent out right now (for tests that check nothing leaks). */
export function leasedSessionCount(): number {
  return busy.size;
}

/** The file's identity too: a graph rewritten in place must not reuse the old session. */
function sessionKey(onnxPath: string, options: OrtDecoderSessionOptions): string {
  const { size, mtimeMs } = statSync(onnxPath);
  return JSON.stringify([onnxPath, size, mtimeMs, options.executionProvider, options.intraOpNumThreads ?? null, options.displayName ?? null, options.disabledOptimizers ?? null]);
}
