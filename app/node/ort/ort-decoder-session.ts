import * as ort from 'onnxruntime-node';
import type { DecoderSession, SessionFeeds, SessionOutputs, ValueInfo } from '../../engine/decoder-session.js';
import { ExecutionProviderRefusedError, GenerationError, ModelLoadError } from '../../engine/engine-errors.js';
import type { HostTensor } from '../../engine/host-tensor.js';
import { modelError } from '../../engine/model-diagnostic.js';
import type { ExecutionProviderName } from '../../engine/types.js';
import { ensureExecutionProvider, webgpuAdapterFix } from './execution-providers.js';
import { createFailure, runFailure } from './ep-failure.js';
import { readableOrtMessage } from './ort-message.js';
import { freeArrayBuffer } from '../free-array-buffer.js';

export interface OrtDecoderSessionOptions {
  readonly executionProvider: ExecutionProviderName;
  /** how messages name the file (e.g. `onnx/model.onnx`); default: the path */
  readonly displayName?: string;
  /** ORT's intra-op threads; default: ORT's own (2 on the reference machines, generation-speed.md) */
  readonly intraOpNumThreads?: number;
  /** graph transformers ORT must not run (`optimization.disable_specified_optimizers`), e.g. for a rewritten graph */
  readonly disabledOptimizers?: readonly string[];
  /** the folder external data `location`s resolve against, when not the graph's own (a rewritten graph reading the source's weights in place) */
  readonly externalDataFolder?: string;
}

/** How this thread's sessions treat the model's weights and buffers (a lab worker's, set per sweep job; a job process's, process-wide). */
export interface SessionSharing {
  /**
   * No prepacking: the weights are read in place. The CPU EP memory-maps external data and uses the
   * mapping as the tensor (tensorprotoutils.cc: Env::GetFileContent maps the range), but prepacking
   * copies every MatMul weight into a packed buffer of the session's own (about 1.9 GiB per session on
   * Qwen2.5-0.5B), so N sessions held N copies. Without it they read one set of page-cache pages: two
   * sessions on synthetic-qwen2.5-0.5b, PSS 1.93 GiB against 4.25 GiB. It changes the last bits of the
   * logits, and more between a chunk's rows and a single row (MLAS's M=1 kernel sums in another order
   * than the packed GEMM that both use with prepacking: a chunked eval's KLD moves 1.8e-5 relative from
   * token by token, against under 1e-5), so it is not the default: a sweep's jobs use it at every job
   * count, so --jobs 1 and --jobs N compute the same numbers, and its references are keyed apart
   * (reference-key.ts). CPU time per token measured within noise of prepacked; a 256-token chunk 0-4% more.
   */
  readonly weightsInPlace: boolean;
  /**
   * ORT's CPU memory arena. It keeps a run's largest buffers for the next run (a 256-token chunk's
   * logits and activations, about 0.35 GiB on Qwen2.5-0.5B), which a lone session reuses, but which,
   * held by each job between its runs while another job runs, was most of a two-job sweep's memory
   * besides the shared weights: peak PSS 2.97 GiB with it, 2.80 GiB without. Off for a sweep with
   * several jobs; where a buffer lives does not change what is computed.
   */
  readonly memoryArena: boolean;
}

const ALONE: SessionSharing = { weightsInPlace: false, memoryArena: true };
let sharing: SessionSharing = ALONE;

/**
 * The sessions this thread opens from now are a sweep's with `jobs` jobs (undefined: not a sweep's).
 * One setting per thread: a lab worker sets it for each job (workers/lab-worker.ts), before the
 * engine opens any session; the session cache and the reference key tell the settings apart. A
 * sweep with several jobs runs each in a process of its own (app/node/lab/sweep-job-worker.ts), so
 * there it is that process's setting. It stays a module setting rather than a session option: the
 * session cache, the reference key and the recorded session facts (session-compute.ts) read it
 * where no session is at hand.
 */
export function setSweepJobs(jobs: number | undefined): void {
  sharing = jobs === undefined ? ALONE : { weightsInPlace: true, memoryArena: jobs <= 1 };
}

/** This thread's setting (session-cache.ts and reference-key.ts key by it). */
export function sessionSharing(): SessionSharing {
  return sharing;
}

/**
 * Opens an ONNX graph with onnxruntime-node as a DecoderSession. Every failure becomes a typed error
 * whose message says what to do; ORT's own text is kept, without its stack or source paths.
 */
export async function createOrtDecoderSession(onnxPath: string, options: OrtDecoderSessionOptions): Promise<DecoderSession> {
  const ep = options.executionProvider;
  ensureExecutionProvider(ep);
  const name = options.displayName ?? onnxPath;
  let session: ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(onnxPath, {
      executionProviders: [ep],
      // A memory pattern is planned for one set of input shapes; a decoder's past grows every step, so
      // the pattern never repeats and re-planning costs a fresh session ~10-20% of its decode speed on
      // stories260k (measured; the arena itself stays on). generation-speed.md: match the minimal loop.
      enableMemPattern: false,
      // A sweep's jobs: see SessionSharing.
      ...(sharing.memoryArena ? {} : { enableCpuMemArena: false }),
      // ORT's intra-op workers otherwise keep spinning after `run` returns, on a core that the decode
      // loop's own JavaScript (and V8's GC threads) need until the next run. On the 2-core machines
      // (separate processes, alternating) stopping them lifted the 8-layer synthetic model's decode
      // by about 3% at load average 2 and 8-11% at 3-4, and two-thread stories260k's by 20-50% under
      // load. Spinning still happens within a run.
      // onnxruntime_session_options_config_keys.h: kOrtSessionOptionsConfigForceSpinningStop.
      extra: {
        session: {
          force_spinning_stop: '1',
          // onnxruntime_session_options_config_keys.h: kOrtSessionOptionsConfigDisablePrepacking (SessionSharing.weightsInPlace)
          ...(sharing.weightsInPlace ? { disable_prepacking: '1' } : {}),
          // onnxruntime_session_options_config_keys.h: kOrtSessionOptionsModelExternalInitializersFileFolderPath
          ...(options.externalDataFolder === undefined ? {} : { model_external_initializers_file_folder_path: options.externalDataFolder }),
        },
        ...(options.disabledOptimizers === undefined ? {} : { optimization: { disable_specified_optimizers: options.disabledOptimizers.join(';') } }),
      },
      ...(options.intraOpNumThreads === undefined ? {} : { intraOpNumThreads: options.intraOpNumThreads }),
    });
  } catch (error) {
    throw sessionCreateError(error, name, ep);
  }
  return new OrtDecoderSession(session, ep, name);
}

class OrtDecoderSession implements DecoderSession {
  readonly inputs: readonly ValueInfo[];
  readonly outputs: readonly ValueInfo[];
  readonly executionProvider: ExecutionProviderName;
  readonly #name: string;
  #session: ort.InferenceSession | null;
  /**
   * The ORT tensor behind each output this session returned, for as long as the output lives. A
   * decoder feeds most outputs straight back (present → past), and re-wrapping them costs an
   * `ort.Tensor` per cache input per step: allocations that make V8 scavenge while the step's large
   * present tensors are still live, which promotes them (generation-speed.md's GC finding).
   */
  readonly #wrappers = new WeakMap<HostTensor, ort.Tensor>();

  constructor(session: ort.InferenceSession, executionProvider: ExecutionProviderName, name: string) {
    this.#session = session;
    this.executionProvider = executionProvider;
    this.#name = name;
    this.inputs = session.inputMetadata.map(valueInfo);
    this.outputs = session.outputMetadata.map(valueInfo);
  }

  async run(feeds: SessionFeeds): Promise<SessionOutputs> {
    const session = this.#session;
    if (session === null) throw new GenerationError(`the session for ${this.#name} was disposed; open the model again.`);
    const ortFeeds: Record<string, ort.Tensor> = {};
    const fresh: ort.Tensor[] = [];
    for (const key in feeds) {
      const tensor = feeds[key]!;
      let wrapper = this.#wrappers.get(tensor);
      if (wrapper === undefined) {
        // Wraps the typed array: onnxruntime-node reads it in place, no copy.
        wrapper = new ort.Tensor(tensor.type, tensor.data, tensor.dims);
        fresh.push(wrapper);
      }
      ortFeeds[key] = wrapper;
    }
    let results: ort.InferenceSession.ReturnType;
    try {
      results = await session.run(ortFeeds);
    } catch (error) {
      throw runFailure(error, this.#name, this.executionProvider);
    } finally {
      // Drop this step's own input wrappers at once (the typed arrays stay with their owners).
      for (const wrapper of fresh) wrapper.dispose();
    }
    const outputs: Record<string, HostTensor> = {};
    for (const key in results) {
      const tensor = results[key]!;
      const output = hostTensor(tensor, key);
      outputs[key] = output;
      // Kept only as long as the HostTensor is (a weak key): dropping the output drops both.
      this.#wrappers.set(output, tensor);
    }
    return outputs;
  }

  /**
   * Frees outputs this session returned (app/engine/output-release.ts): drops their ORT wrapper and
   * frees the array buffer, when the array covers all of it (onnxruntime-node gives every output a
   * buffer of its own; anything else is left to the garbage collector). Others' tensors are ignored.
   */
  release(outputs: readonly HostTensor[]): void {
    for (const output of outputs) {
      const wrapper = this.#wrappers.get(output);
      if (wrapper === undefined) continue;
      this.#wrappers.delete(output);
      wrapper.dispose();
      const data = output.data;
      if (data.byteOffset === 0 && data.byteLength === data.buffer.byteLength) freeArrayBuffer(data.buffer);
    }
  }

  async dispose(): Promise<void> {
    const session = this.#session;
    this.#session = null;
    await session?.release();
  }
}

function valueInfo(metadata: ort.InferenceSession.ValueMetadata): ValueInfo {
  if (!metadata.isTensor) return { name: metadata.name, type: 'non-tensor', shape: [] };
  return { name: metadata.name, type: metadata.type, shape: [...metadata.shape] };
}

function hostTensor(tensor: ort.Tensor, name: string): HostTensor {
  // ORT's own dims array, never mutated (HostTensor dims are readonly)
  const dims = tensor.dims;
  switch (tensor.type) {
    case 'float32': return { type: 'float32', dims, data: tensor.data as Float32Array };
    case 'float16': return { type: 'float16', dims, data: tensor.data as Uint16Array };
    case 'int64': return { type: 'int64', dims, data: tensor.data as BigInt64Array };
    default:
      throw new GenerationError(`output \`${name}\` is ${tensor.type}; kvscope reads float32, float16 and int64 outputs.`,
        'Use a float32 or fp16 export of the model.');
  }
}

function sessionCreateError(error: unknown, name: string, ep: ExecutionProviderName): Error {
  const message = readableOrtMessage(error);
  const epFailure = createFailure(message, name);
  if (epFailure !== null) return epFailure;
  if (/Failed to get a WebGPU adapter|No supported adapters|Couldn't load Vulkan/i.test(message)) {
    return new ExecutionProviderRefusedError(`onnxruntime found no WebGPU adapter: ${message}`, webgpuAdapterFix());
  }
  if (/Failed to load (shared )?library|providers_shared/i.test(message)) {
    return new ExecutionProviderRefusedError(`onnxruntime could not load the ${ep} execution provider: ${message}`,
      ep === 'cuda' ? 'Install CUDA 12 and cuDNN 9, then run `ONNXRUNTIME_NODE_INSTALL=cuda12 node node_modules/onnxruntime-node/script/install.js`; or run on cpu.' : 'Run on cpu.');
  }
  if (/File doesn't exist|No such file/i.test(message) && !/external|\.data/i.test(message)) {
    const fix = 'Check the path, or pick one of the variants kvscope lists for the folder.';
    return new ModelLoadError(`${name} does not exist (onnxruntime: "${message}").`,
      { fix, diagnostics: [modelError('onnx-missing', `${name} does not exist.`, fix)] });
  }
  if (/external|onnx_data|\.onnx\.data|location/i.test(message)) {
    const fix = 'Download the external data file(s) (model.onnx_data or model.onnx.data) into the same folder as the .onnx file.';
    return new ModelLoadError(`${name} keeps its weights in an external data file that onnxruntime cannot read: ${message}`,
      { fix, diagnostics: [modelError('onnx-external-data-missing', `${name}: external weights missing or unreadable (${message}).`, fix)] });
  }
  if (/Protobuf parsing failed|ModelProto|INVALID_PROTOBUF|INVALID_GRAPH|parse/i.test(message)) {
    const fix = 'Download the .onnx file again (a truncated download or a Git LFS pointer file looks like this), or re-export the model.';
    return new ModelLoadError(`${name} is not a readable ONNX model (onnxruntime: "${message}").`,
      { fix, diagnostics: [modelError('onnx-unreadable', `${name} is not a readable ONNX model: ${message}`, fix)] });
  }
  const fix = ep === 'cpu'
    ? 'Check that the file is a complete ONNX export (opset ≥ 13) for this onnxruntime version.'
    : `Try the cpu execution provider; ${ep} may not support every operator of this graph.`;
  return new ModelLoadError(`onnxruntime could not open ${name} on ${ep}: ${message}`,
    { fix, diagnostics: [modelError('onnx-unreadable', `onnxruntime could not open ${name} on ${ep}: ${message}`, fix)] });
}
