import type { CacheLayerPlan } from '../../cache/layer-plan.js';
import type { ModelIdentity } from '../../engine/generation-result.js';
import { planInGraph, unpackStrategyFor, type InGraphRun } from '../../engine/in-graph-run.js';
import { modelWarning, type ModelDiagnostic } from '../../engine/model-diagnostic.js';
import type { RunSettings } from '../../engine/types.js';
import { withHeadInputDefault } from '../../lab/model-head.js';
import { LOGITS_TO_KEEP_INPUT } from '../../onnx/rewrite/logits-rows.js';
import { ensureInGraphModel, type InGraphModel } from '../onnx/in-graph-model.js';
import { intraOpThreadsFor } from '../ort/intra-op-threads.js';
import { leaseDecoderSession, type LeasedSession } from '../ort/session-cache.js';
import { sha256File, sha256Text } from './file-digest.js';
import { cappedThreads, type ModelFiles, type OpenedModel } from './open-model.js';

/**
 * ORT's transpose optimizer pushes a Transpose through a Concat whenever that removes a node, whatever
 * the tensors' sizes. In a source graph the key Concat's output is a graph output (present), so it
 * stays put and the score MatMul fuses the key transpose (FusedMatMul, transB). In the rewritten graph
 * the Concat feeds attention alone, and the optimizer would transpose every layer's whole history
 * each step to save one Transpose of the new key (measured on the 8-layer synthetic model: 16
 * history-sized transposes, the score MatMul no longer fused). Both its passes are disabled, which
 * leaves the rewritten attention exactly as ORT optimizes the source's (and the logits bit-identical).
 */
export const IN_GRAPH_DISABLED_OPTIMIZERS: readonly string[] = ['TransposeOptimizer', 'TransposeOptimizer_CPUExecutionProvider'];

/** A model opened on the in-graph dequantization path: the rewritten graph's session, and what the engine needs to drive it. */
export interface InGraphOpenedModel extends OpenedModel {
  readonly inGraph: InGraphRun;
  readonly rewrite: InGraphModel;
}

/**
 * Opens `files` for a quantized run with `--dequantize graph`: the source graph's I/O is its header's
 * (readModelFiles checked it against the config; no session on the source), the rewrite is built or
 * taken from the content-addressed cache (app/node/onnx/in-graph-model.ts), and the session is
 * created from the cached file. The reference replay, when on, runs on the same session (every row
 * kept in full precision: createReferenceLane), so the weights are held once. Returns the reason instead when the graph path
 * cannot express these settings or this layout (the caller refuses or runs host).
 */
export async function openInGraphModel(
  files: ModelFiles, settings: Pick<RunSettings, 'executionProvider' | 'quantization' | 'reference'>, plan: readonly CacheLayerPlan[],
  options: {
    readonly maxIntraOpThreads?: number;
    /**
     * Called once the graph path is certain, before the rewritten graph's session is created: a caller
     * holding the source graph's session (eval, after its reference) releases it here, so the weights
     * are resident once (issue 23, point 1).
     */
    readonly beforeSession?: () => Promise<void>;
    /**
     * An evaluation with a compact reference: the rewritten graph also takes hidden rows before its LM
     * head whose logits it returns (app/lab/model-head.ts), so the stored reference is read on this
     * session and no other holds the head's weight; the session feeds them zero rows otherwise.
     */
    readonly headLogits?: string;
    /**
     * A graph without num_logits_to_keep whose LM head was found (LogitsRowsSupport `derived`): the
     * rewritten graph also takes the input (keepLogitsRows, composed into the same derived graph).
     */
    readonly logitsRows?: boolean;
  } = {},
): Promise<InGraphOpenedModel | { readonly reason: string }> {
  const { folder, layout, onnxPath, config, configBytes, tokenizer, specialTokens } = files;
  const executionProvider = settings.executionProvider;
  const io = files.analysis.io;
  const refusal = layoutRefusal(files);
  if (refusal !== null || io === null) return { reason: refusal ?? 'the graph\'s inputs and outputs were not read' };
  const diagnostics: ModelDiagnostic[] = [...files.diagnostics];
  const planned = planInGraph(io, config.geometry, plan, settings.quantization, unpackStrategyFor(executionProvider));
  if (!planned.ok) return { reason: planned.reason };
  const rewrite = await ensureInGraphModel(onnxPath, planned.spec, undefined, {
    ...(options.headLogits === undefined ? {} : { headLogits: options.headLogits }), ...(options.logitsRows === true ? { logitsRows: io.logits } : {}),
  });
  if (rewrite.rebuiltBecause !== null) {
    diagnostics.push(modelWarning('cache-entry-rebuilt', `${rewrite.rebuiltBecause}; it was discarded and rebuilt (the model itself was not at fault).`));
  }
  const intraOpNumThreads = cappedThreads(intraOpThreadsFor(executionProvider, config.geometry.hiddenSize), options.maxIntraOpThreads);
  const sessionOptions = { executionProvider, ...(intraOpNumThreads === undefined ? {} : { intraOpNumThreads }) };
  const leases: LeasedSession[] = [];
  const releaseAll = async (): Promise<void> => {
    for (const lease of leases.splice(0)) await lease.release();
  };
  await options.beforeSession?.();
  try {
    const lease = await leaseDecoderSession(rewrite.path, {
      ...sessionOptions, displayName: `${layout.graph} (rewritten for in-graph dequantization)`, disabledOptimizers: IN_GRAPH_DISABLED_OPTIMIZERS,
      externalDataFolder: rewrite.externalDataFolder,
      // the rewrite reads the source's weights: the session holds about what the source's would
      residentBytes: files.analysis.externalData.totalBytes,
    });
    leases.push(lease);
    if (specialTokens.eosTokenIds.length === 0) {
      diagnostics.push(modelWarning('generation-config-invalid',
        'Neither generation_config.json nor the config names an eos_token_id: runs stop only at maxNewTokens.',
        'Add "eos_token_id" to generation_config.json.'));
    }
    const identity: ModelIdentity = {
      folder: folder.folder,
      onnxFile: layout.graph,
      onnxSha256: await sha256File(onnxPath),
      configSha256: sha256Text(configBytes),
      modelType: config.modelType ?? null,
      numLayers: config.geometry.numLayers,
      kvDtype: io.kvDtype ?? 'float32',
    };
    const session = rewrite.headInput === null ? lease.session : withHeadInputDefault(lease.session, rewrite.headInput);
    // The header's I/O is the source graph's: the derived graph's added input is fed by StepInputs.
    const runIo = rewrite.logitsRows ? { ...io, logitsToKeep: LOGITS_TO_KEEP_INPUT } : io;
    return {
      folder, layout, config, session, io: runIo, tokenizer, specialTokens, identity, diagnostics, sessionReused: lease.reused,
      inGraph: { kv: rewrite.io },
      rewrite,
      dispose: releaseAll,
    };
  } catch (error) {
    await releaseAll();
    throw error;
  }
}

/**
 * Layouts the rewrite does not take (it replaces per-layer past inputs and present outputs of one
 * decode graph): the answer is host, with the reason.
 */
function layoutRefusal(files: ModelFiles): string | null {
  const io = files.analysis.io;
  if (files.layout.prefillGraph !== null) return `the ${files.layout.label} runs its prefill on a second graph, which the rewrite does not take`;
  if (io === null) return null;
  if (io.useCacheBranch !== null) return 'merged decoders (use_cache_branch, a graph per branch) are not rewritten';
  if (io.kvLayers.some((layer) => layer.packing !== 'per-layer')) return 'combined past tensors ([2, batch, heads, seq, head_dim] per layer) are not rewritten';
  if (io.presentMayExceedValidLength) return 'a present that shares its buffer with the past (past_present_share_buffer) is not rewritten';
  return null;
}
