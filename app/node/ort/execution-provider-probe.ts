import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { webgpuGate } from '../worker/exclusive-gate.js';
import type { ExecutionProviderName } from '../../engine/types.js';
import { TensorProto_DataType as OnnxDataType } from 'onnx-buf';
import { GraphBuilder } from '../../onnx/graph-builder.js';
import { createModel, encodeModel } from '../../onnx/onnx-model.js';
import { readableOrtMessage } from './ort-message.js';

/** What trying an execution provider for real found. */
export type ProbeOutcome = { readonly ok: true } | { readonly ok: false; readonly message: string };

/** How long one probe may take (SwiftShader's Vulkan starts in about a second; a hung driver must not hold the host). */
export const PROBE_TIMEOUT_MS = 20_000;

/**
 * Whether an execution provider really works in this host, not merely whether onnxruntime-node lists
 * it: a session is created on it for a one-node graph (x·x) and run once, in a child process. WebGPU is
 * listed wherever Dawn is bundled, but only a session shows whether an adapter exists (no GPU, no
 * Vulkan driver: "Failed to get a WebGPU adapter"); CUDA's switch is listed once its provider library
 * is installed, but only a session shows whether the CUDA runtime and cuDNN it loads are there. A
 * child process, because a driver that crashes (a segfault in native code) must take only the probe
 * down, and because WebGPU sessions in two threads of one process at once crash onnxruntime-node.
 */
export function probeExecutionProvider(name: ExecutionProviderName, env: NodeJS.ProcessEnv = process.env): Promise<ProbeOutcome> {
  const ortEntry = createRequire(import.meta.url).resolve('onnxruntime-node');
  // The packaged desktop app has Electron's RunAsNode fuse off: its binary cannot run as Node, so the
  // probe runs in a worker thread there, behind the one WebGPU gate (worker-client.ts) like any session.
  if (process.versions['electron'] !== undefined) return probeInWorker(name, ortEntry);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-e', PROBE_SCRIPT], {
      env: {
        ...env, ORT_DISABLE_TELEMETRY: env['ORT_DISABLE_TELEMETRY'] ?? '1',
        KVSCOPE_PROBE_ORT: ortEntry, KVSCOPE_PROBE_EP: name, KVSCOPE_PROBE_MODEL: Buffer.from(probeModel()).toString('base64'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let settled = false;
    const finish = (outcome: ProbeOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      finish({ ok: false, message: `creating a ${name} session did not finish within ${PROBE_TIMEOUT_MS / 1000} s (a hung GPU driver?).` });
    }, PROBE_TIMEOUT_MS);
    child.stdout.on('data', (chunk: Buffer) => void (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
    child.on('error', (error) => finish({ ok: false, message: `the probe process could not start: ${error.message}` }));
    child.on('close', (code, signal) => {
      const line = stdout.trim().split('\n').at(-1) ?? '';
      try {
        const answer = JSON.parse(line) as { ok?: unknown; message?: unknown };
        if (answer.ok === true) return finish({ ok: true });
        if (typeof answer.message === 'string') return finish({ ok: false, message: readableOrtMessage(new Error(answer.message)) });
      } catch {
        // no answer: the process died before it could print one
      }
      const why = signal !== null ? `was killed by ${signal}` : `exited with code ${code}`;
      const detail = readableOrtMessage(new Error(stderr.trim().split('\n').slice(-3).join(' ')));
      finish({ ok: false, message: `creating a ${name} session crashed the probe process (it ${why})${stderr.trim() === '' ? '' : `: ${detail}`}.` });
    });
  });
}

/** The probe in a worker thread of this process (the desktop app, where no child can run as Node). */
export async function probeInWorker(name: ExecutionProviderName, ortEntry: string): Promise<ProbeOutcome> {
  const release = name === 'webgpu' ? await webgpuGate.acquire() : () => undefined;
  try {
    return await new Promise<ProbeOutcome>((resolve) => {
      const worker = new Worker(WORKER_SCRIPT, { eval: true, workerData: { ort: ortEntry, ep: name, model: probeModel() } });
      const timer = setTimeout(() => {
        void worker.terminate();
        resolve({ ok: false, message: `creating a ${name} session did not finish within ${PROBE_TIMEOUT_MS / 1000} s (a hung GPU driver?).` });
      }, PROBE_TIMEOUT_MS);
      worker.once('message', (answer: { ok: boolean; message?: string }) => {
        clearTimeout(timer);
        resolve(answer.ok ? { ok: true } : { ok: false, message: readableOrtMessage(new Error(answer.message ?? 'unknown failure')) });
        void worker.terminate();
      });
      worker.once('error', (error) => {
        clearTimeout(timer);
        resolve({ ok: false, message: readableOrtMessage(error) });
      });
    });
  } finally {
    release();
  }
}

/** The worker's program: the child's, answering through the port. */
const WORKER_SCRIPT = `
const { parentPort, workerData } = require('node:worker_threads');
const ort = require(workerData.ort);
(async () => {
  try {
    const session = await ort.InferenceSession.create(workerData.model, { executionProviders: [workerData.ep], logSeverityLevel: 3 });
    const x = new ort.Tensor('float32', Float32Array.of(1, 2, 3, 4), [1, 4]);
    const out = await session.run({ x });
    if (out.y.data[3] !== 16) throw new Error('the probe graph computed ' + out.y.data[3] + ' for 4·4');
    await session.release();
    parentPort.postMessage({ ok: true });
  } catch (error) {
    parentPort.postMessage({ ok: false, message: String(error && error.message || error) });
  }
})();
`;

/** The child's program: plain CommonJS (it runs from source and from the build alike), one JSON line out. */
const PROBE_SCRIPT = `
const ort = require(process.env.KVSCOPE_PROBE_ORT);
(async () => {
  try {
    const model = Buffer.from(process.env.KVSCOPE_PROBE_MODEL, 'base64');
    const session = await ort.InferenceSession.create(model, { executionProviders: [process.env.KVSCOPE_PROBE_EP], logSeverityLevel: 3 });
    const x = new ort.Tensor('float32', Float32Array.of(1, 2, 3, 4), [1, 4]);
    const out = await session.run({ x });
    if (out.y.data[3] !== 16) throw new Error('the probe graph computed ' + out.y.data[3] + ' for 4·4');
    await session.release();
    console.log(JSON.stringify({ ok: true }));
  } catch (error) {
    console.log(JSON.stringify({ ok: false, message: String(error && error.message || error) }));
  }
})();
`;

let model: Uint8Array | undefined;

/** y = x·x on a [1, 4] float tensor: an op every provider implements. */
function probeModel(): Uint8Array {
  if (model !== undefined) return model;
  const graph = new GraphBuilder();
  const x = graph.input('x', OnnxDataType.FLOAT, [1, 4]);
  graph.output('y', OnnxDataType.FLOAT, [1, 4]);
  graph.at('/probe').opNamed('y', 'Mul', [x, x]);
  model = encodeModel(createModel({
    irVersion: 8n, producerName: 'kvscope', producerVersion: 'probe', graph: graph.build('kvscope-probe', 'execution provider probe'),
    opsetImport: [{ domain: '', version: 17n }],
  }));
  return model;
}
