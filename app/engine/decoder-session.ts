import type { HostTensor } from './host-tensor.js';
import type { ExecutionProviderName } from './types.js';

/** One graph input or output as the session's metadata describes it; symbolic dims are strings. */
export interface ValueInfo {
  readonly name: string;
  /** onnxruntime's element type name (`float32`, `float16`, `int64`, …); `non-tensor` for sequences and maps */
  readonly type: string;
  readonly shape: readonly (number | string)[];
}

export type SessionFeeds = Readonly<Record<string, HostTensor>>;
export type SessionOutputs = Readonly<Record<string, HostTensor>>;

/**
 * The engine's only view of a model: a session that runs plain typed-array tensors (STYLE.md §7).
 * onnxruntime-node implements it in app/node/ort; a browser build would wrap onnxruntime-web the same
 * way. `run` must not keep references to the feeds after it resolves, and its outputs belong to the caller.
 */
export interface DecoderSession {
  readonly inputs: readonly ValueInfo[];
  readonly outputs: readonly ValueInfo[];
  /** the provider the session was created on */
  readonly executionProvider: ExecutionProviderName;
  /** runs the graph and returns every output */
  run(feeds: SessionFeeds): Promise<SessionOutputs>;
  /**
   * Optional: frees the memory of these outputs of this session's runs now, instead of at some later
   * garbage collection; they must not be read again (their arrays become empty). Tensors the session
   * did not return are left alone. Why it matters: app/engine/output-release.ts.
   */
  release?(outputs: readonly HostTensor[]): void;
  /** releases the native session; later runs throw. Idempotent. */
  dispose(): Promise<void>;
}
