import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { GenerationResult } from '../../app/engine/generation-result.js';
import { hasShared } from '../../app/node/golden.js';
import { storiesDir, storiesSettings } from '../../app/node/test-support/stories.js';
import { parseRunRecord } from '../../app/record/parse-run-record.js';
import { createWebSocketApi, type WebSocketConstructor } from '../../renderer/api/websocket-api.js';
import { spawnCli } from './test-support/spawn-cli.js';

const root = mkdtempSync(join(tmpdir(), 'kvscope-signals-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function until(condition: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.skipIf(!hasShared())('signals: runs in flight are cancelled and saved as cancelled, then the process exits (issue 9, failure 7)', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`kvscope run on ${signal}: the record is written as cancelled and the exit code is 0`, async () => {
      const out = join(root, `run-${signal}.json`);
      const cli = spawnCli(['run', '--model', storiesDir(), '--cache', 'dynamic', '--max-new-tokens', '450', '--out', out]);
      await until(() => cli.output().stdout.length > 0, 'the first streamed text');
      cli.child.kill(signal);
      const outcome = await cli.done;
      expect(outcome.signal).toBeNull();
      expect(outcome.code).toBe(0);
      expect(outcome.stderr).toMatch(signal === 'SIGTERM' ? /SIGTERM: cancelling at the next step/ : /cancelling at the next step; the result and --out are still written/);
      const record = parseRunRecord(readFileSync(out, 'utf8'), out);
      expect(record.stopReason).toBe('cancelled');
      expect(record.generatedTokenIds.length).toBeLessThan(450);
    });
  }

  it('kvscope serve on SIGTERM: the page sees its run end as cancelled, the record is saved, the server exits 0', async () => {
    const dataDir = join(root, 'serve-data');
    const serve = spawnCli(['serve', '--port', '0', '--data-dir', dataDir]);
    await until(() => /token=/.test(serve.output().stdout), 'the printed URL');
    const url = new URL(/http:\/\/\S+/.exec(serve.output().stdout)![0]);
    const api = createWebSocketApi(`ws://${url.host}/api`, url.searchParams.get('token')!, { WebSocket: WebSocket as unknown as WebSocketConstructor });
    let steps = 0;
    const ended = new Promise<{ result: GenerationResult; savedRunId: string | null }>((resolve, reject) => {
      void api.startRun(storiesSettings({ maxNewTokens: 450 }), {
        onText: () => undefined,
        onMetrics: (batch) => void (steps += batch.length),
        onDone: (result, savedRunId) => resolve({ result, savedRunId }),
        onError: (error) => reject(new Error(error.message)),
      });
    });
    await until(() => steps > 0, 'the first metrics');
    serve.child.kill('SIGTERM');
    const { result, savedRunId } = await ended;
    expect(result.stopReason).toBe('cancelled');
    expect(savedRunId).not.toBeNull();
    const outcome = await serve.done;
    api.close();
    expect(outcome.signal).toBeNull();
    expect(outcome.code).toBe(0);
    expect(outcome.stderr).toMatch(/stopping: runs in flight are cancelled at their next step and saved as cancelled/);
    const files = readdirSync(join(dataDir, 'runs'));
    expect(files).toEqual([`${savedRunId}.json`]);
    expect(parseRunRecord(readFileSync(join(dataDir, 'runs', files[0]!), 'utf8'), files[0]!).stopReason).toBe('cancelled');
  });
});

/**
 * Issue 24 point 3: any number of SIGINT/SIGTERM, at any phase, ends with the summary and `--out`
 * written, or (before kvscope listens) with nothing written; never a native abort. Before the fix a
 * second signal disposed the run, terminating its worker while onnxruntime's session.run was in
 * flight: `terminate called after throwing an instance of 'Napi::Error'`, rc 134, in about 1 of 3
 * trials. Each phase is tried several times to catch such a race.
 */
describe.skipIf(!hasShared())('repeated signals at any phase never abort natively and never lose --out', () => {
  /** `run` on stories260k, 400 tokens; `--cache dynamic` unless the phase gives its own cache flags */
  const runArgs = (out: string, cache: readonly string[] = ['--cache', 'dynamic']): string[] => ['run', '--model', storiesDir(), '--max-new-tokens', '400', '--out', out, ...cache];

  /** What every trial must show, whatever the phase the signals hit. */
  function expectCleanEnd(outcome: { code: number | null; signal: NodeJS.Signals | null; stderr: string }, out: string, what: string): 'recorded' | 'stopped-early' {
    expect(outcome.stderr, what).not.toMatch(/terminate called|Napi::Error|internal error/);
    expect(outcome.signal, what).not.toBe('SIGABRT');
    expect(outcome.code, what).not.toBe(134);
    if (existsSync(out)) {
      expect(outcome.code, `${what}: ${outcome.stderr}`).toBe(0);
      expect(outcome.stderr, what).toMatch(/tokens \(cancelled\)|tokens \(/);
      parseRunRecord(readFileSync(out, 'utf8'), out);
      return 'recorded';
    }
    // Signalled before kvscope listened (node still loading): ended by the signal or by the early handler's line; nothing written.
    // (killed by the signal itself only before node ran kvscope's first module: then nothing at all was printed)
    if (outcome.code !== null) expect([130, 143], `${what}: ${outcome.stderr}`).toContain(outcome.code);
    if (outcome.stderr !== '') expect(outcome.stderr, what).toMatch(/stopping now; no file is left half-written/);
    expect(readdirSync(root).filter((name) => name.startsWith(`.${basename(out)}`)), `${what}: no temporary file left`).toEqual([]);
    return 'stopped-early';
  }

  function mapsOnnxruntime(pid: number): boolean {
    try {
      return readFileSync(`/proc/${pid}/maps`, 'utf8').includes('libonnxruntime');
    } catch {
      return false;
    }
  }

  async function burst(pid: number, signals: readonly NodeJS.Signals[], gapMs: number): Promise<void> {
    for (const signal of signals) {
      try {
        process.kill(pid, signal);
      } catch {
        return; // already gone
      }
      await new Promise((resolve) => setTimeout(resolve, gapMs));
    }
  }

  const phases: { name: string; args: readonly string[]; waitFor: (cli: ReturnType<typeof spawnCli>) => Promise<void> }[] = [
    // the worker has mapped onnxruntime (Linux: /proc/PID/maps): the graph is being rewritten (a quantized
    // cache on the graph path, each trial with an empty rewrite cache), its session created, or the prefill runs
    {
      name: 'load and rewrite (onnxruntime loaded, no token yet)', args: ['--cache', 'quantized', '--group-size', '32', '--residual-length', '16'],
      waitFor: async (cli) => until(() => mapsOnnxruntime(cli.child.pid!), 'onnxruntime loaded', 30_000),
    },
    { name: 'decode (text streaming)', args: ['--cache', 'dynamic'], waitFor: async (cli) => until(() => cli.output().stdout.length > 0, 'the first streamed text') },
  ];
  let trial = 0;
  for (const phase of phases) {
    it(`${phase.name}: 3 trials of SIGTERM, SIGINT, SIGTERM, SIGINT 5 ms apart (the cancelling phase hit again and again)`, async () => {
      const ends: string[] = [];
      for (let i = 0; i < 3; i++) {
        const out = join(root, `burst-${trial++}.json`);
        const cli = spawnCli(runArgs(out, phase.args), { env: { KVSCOPE_CACHE_DIR: join(root, `cache-${trial}`) } });
        await phase.waitFor(cli);
        await burst(cli.child.pid!, ['SIGTERM', 'SIGINT', 'SIGTERM', 'SIGINT'], 5);
        const outcome = await cli.done;
        ends.push(expectCleanEnd(outcome, out, `${phase.name}, trial ${i + 1}`));
        expect(parseRunRecord(readFileSync(out, 'utf8'), out).stopReason).toBe('cancelled');
      }
      // kvscope listens before its worker loads onnxruntime: every trial ends with the record
      expect(ends).toEqual(['recorded', 'recorded', 'recorded']);
    }, 60_000);
  }

  it('kvscope serve, SIGTERM three times while a run decodes (2 trials): the run saved as cancelled, exit 0, never SIGABRT', async () => {
    for (let i = 0; i < 2; i++) {
      const dataDir = join(root, `serve-burst-${i}`);
      const serve = spawnCli(['serve', '--port', '0', '--data-dir', dataDir]);
      await until(() => /token=/.test(serve.output().stdout), 'the printed URL');
      const url = new URL(/http:\/\/\S+/.exec(serve.output().stdout)![0]);
      const api = createWebSocketApi(`ws://${url.host}/api`, url.searchParams.get('token')!, { WebSocket: WebSocket as unknown as WebSocketConstructor });
      let steps = 0;
      const ended = new Promise<string | null>((resolve, reject) => {
        void api.startRun(storiesSettings({ maxNewTokens: 450 }), {
          onText: () => undefined,
          onMetrics: (batch) => void (steps += batch.length),
          onDone: (_result, savedRunId) => resolve(savedRunId),
          onError: (error) => reject(new Error(error.message)),
        });
      });
      await until(() => steps > 0, 'the first metrics');
      await burst(serve.child.pid!, ['SIGTERM', 'SIGTERM', 'SIGINT'], 2);
      const savedRunId = await ended;
      const outcome = await serve.done;
      api.close();
      expect(outcome.stderr).not.toMatch(/terminate called|Napi::Error/);
      expect(outcome.signal, outcome.stderr).toBeNull();
      expect(outcome.code, outcome.stderr).toBe(0);
      expect(readdirSync(join(dataDir, 'runs'))).toEqual([`${savedRunId}.json`]);
    }
  }, 60_000);

  it('as `timeout -s TERM -k 5 4` and Slurm (SIGTERM to the step, SIGKILL after KillWait) send them: the record is written within the grace', async () => {
    // GNU timeout: SIGTERM at 4 s (in the decode, or after the run ended, by the machine's speed), SIGKILL 5 s later if still running
    const out = join(root, 'timeout.json');
    const child = spawn('timeout', ['--preserve-status', '-s', 'TERM', '-k', '5', '4', process.execPath, '--import', 'tsx', fileURLToPath(new URL('./kvscope.ts', import.meta.url)), ...runArgs(out)], {
      cwd: fileURLToPath(new URL('../../', import.meta.url)), stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NO_COLOR: '1' },
    });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => void (stderr += chunk));
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('close', (c, s) => resolve([c, s])));
    expect(expectCleanEnd({ code, signal, stderr }, out, 'timeout')).toBe('recorded');

    // Slurm: SIGTERM (twice: the step's and its batch script's forward), SIGKILL after a 5 s KillWait
    for (let i = 0; i < 1; i++) {
      const slurmOut = join(root, `slurm-${i}.json`);
      const cli = spawnCli(runArgs(slurmOut));
      await until(() => cli.output().stdout.length > 0, 'the first streamed text');
      await burst(cli.child.pid!, ['SIGTERM', 'SIGTERM'], 1);
      const kill = setTimeout(() => cli.child.kill('SIGKILL'), 5_000);
      const outcome = await cli.done;
      clearTimeout(kill);
      expect(expectCleanEnd(outcome, slurmOut, `slurm ${i + 1}`)).toBe('recorded');
    }
  }, 60_000);
});
