import { join } from 'node:path';
import { runCli } from '../main/cli/run-cli.js';
import { nodeCliIo } from '../main/cli/node-io.js';
import { ensureSyntheticModel } from '../app/node/synthetic/ensure-synthetic-model.js';
import type { SyntheticModelKind } from '../app/synthetic/synthetic-spec.js';
import { disableOrtTelemetry } from '../app/node/worker/ort-telemetry.js';
import { createMinimalSession, minimalGreedy } from './minimal-loop.js';
import { peakRssBytes } from './peak-rss.js';

/**
 * One figure of the scale bench (bench/scale.ts) in a process of its own, so its ru_maxrss is that
 * run's alone (bench/child-json.ts): the plain onnxruntime-node loop on the model, or one kvscope CLI
 * command exactly as a user types it (its worker threads included; a sweep's job processes are this
 * process's children, which bench/scale.ts samples from outside). Prints one JSON line: this process's
 * own peak RSS, the exit code, and the loop's or the CLI's timings.
 * By hand: `npx tsx bench/scale-child.ts '{"kind":"plain","model":"synthetic-qwen2.5-0.5b","promptTokens":16,"newTokens":32}'`
 */
export type ScaleJob =
  | { readonly kind: 'plain'; readonly model: SyntheticModelKind; readonly promptTokens: number; readonly newTokens: number }
  | { readonly kind: 'cli'; readonly args: readonly string[] };

export interface ScaleChildResult {
  readonly peakRssBytes: number;
  readonly exitCode: number;
  /** the plain loop's, or the CLI's `--json` record's decode speed where it printed one */
  readonly decodeTokensPerSecond: number | null;
  readonly prefillMs: number | null;
}

const job = JSON.parse(process.argv[2] ?? '{}') as ScaleJob;
disableOrtTelemetry();
const write = process.stdout.write.bind(process.stdout);
let result: ScaleChildResult;
if (job.kind === 'plain') {
  const folder = await ensureSyntheticModel(job.model);
  const session = await createMinimalSession(join(folder, 'onnx', 'model.onnx'));
  const prompt = Array.from({ length: job.promptTokens }, (_, i) => 300 + ((i * 7919) % 20_000));
  const loop = await minimalGreedy(session, prompt, job.newTokens);
  result = {
    peakRssBytes: peakRssBytes(), exitCode: 0, prefillMs: loop.prefillMs,
    decodeTokensPerSecond: loop.decodeTokens === 0 ? null : (1000 * loop.decodeTokens) / loop.decodeMs,
  };
  await session.release();
} else {
  // The CLI's output is kept, not shown: its --json record (the last object it prints) gives the timings.
  let captured = '';
  process.stdout.write = ((chunk: string | Uint8Array) => {
    captured += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    return true;
  }) as typeof process.stdout.write;
  const exitCode = await runCli([...job.args], nodeCliIo());
  process.stdout.write = write;
  const record = lastJsonObject(captured);
  const timings = (record?.['timings'] ?? {}) as Record<string, unknown>;
  result = {
    peakRssBytes: peakRssBytes(), exitCode,
    decodeTokensPerSecond: typeof timings['decodeTokensPerSecond'] === 'number' ? timings['decodeTokensPerSecond'] : null,
    prefillMs: typeof timings['prefillMs'] === 'number' ? timings['prefillMs'] : null,
  };
  if (exitCode !== 0) process.stderr.write(captured.slice(-2000));
}
write(`${JSON.stringify(result)}\n`);
// Worker threads (a sweep's) and ORT's pools would keep the process alive.
process.exit(0);

function lastJsonObject(text: string): Record<string, unknown> | null {
  const start = text.lastIndexOf('\n{');
  const from = start >= 0 ? start + 1 : text.startsWith('{') ? 0 : -1;
  if (from < 0) return null;
  try {
    return JSON.parse(text.slice(from)) as Record<string, unknown>;
  } catch {
    return null;
  }
}
