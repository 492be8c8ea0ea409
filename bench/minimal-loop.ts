import * as ort from 'onnxruntime-node';

/**
 * The peer kvscope's full-precision decode must match (../shared/reference/generation-speed.md): a
 * minimal onnxruntime-node greedy loop of about 40 lines. Default session options; `present.*` fed
 * back as `past_key_values.*` untouched; argmax of the last logits row. Nothing else: no metrics, no
 * checks, no EOS stop (like `min_new_tokens = max_new_tokens`).
 */
export interface MinimalLoopResult {
  readonly tokenIds: number[];
  /** session.run of the prompt, plus the argmax */
  readonly prefillMs: number;
  /** from the first decode run to the end of the last: `newTokens - 1` runs, as kvscope's decodeMs */
  readonly decodeMs: number;
  readonly decodeTokens: number;
}

export async function createMinimalSession(onnxPath: string): Promise<ort.InferenceSession> {
  return ort.InferenceSession.create(onnxPath);
}

export async function minimalGreedy(session: ort.InferenceSession, promptIds: readonly number[], newTokens: number): Promise<MinimalLoopResult> {
  const pastNames = session.inputNames.filter((name) => name.startsWith('past_key_values.'));
  const feeds: Record<string, ort.Tensor> = {};
  for (const name of pastNames) {
    const meta = session.inputMetadata.find((m) => m.name === name);
    const [, heads, , headDim] = meta?.isTensor === true ? meta.shape : [];
    feeds[name] = new ort.Tensor('float32', new Float32Array(0), [1, Number(heads), 0, Number(headDim)]);
  }
  // A graph that computes only the kept rows' logits (transformers' num_logits_to_keep) is fed 1, as any caller would.
  if (session.inputNames.includes('num_logits_to_keep')) feeds['num_logits_to_keep'] = new ort.Tensor('int64', BigInt64Array.of(1n), []);
  const tokenIds: number[] = [];
  let ids = promptIds.map(BigInt);
  let past = 0;
  const start = performance.now();
  let decodeStart = start;
  for (let step = 0; step < newTokens; step++) {
    if (step === 1) decodeStart = performance.now();
    const total = past + ids.length;
    feeds['input_ids'] = new ort.Tensor('int64', BigInt64Array.from(ids), [1, ids.length]);
    feeds['attention_mask'] = new ort.Tensor('int64', new BigInt64Array(total).fill(1n), [1, total]);
    feeds['position_ids'] = new ort.Tensor('int64', BigInt64Array.from(ids, (_, i) => BigInt(past + i)), [1, ids.length]);
    const out = await session.run(feeds);
    for (const name of pastNames) feeds[name] = out[name.replace('past_key_values.', 'present.')]!;
    const logits = out['logits']!.data as Float32Array;
    const vocab = out['logits']!.dims[2]!;
    let best = 0;
    for (let i = 1; i < vocab; i++) if (logits[logits.length - vocab + i]! > logits[logits.length - vocab + best]!) best = i;
    tokenIds.push(best);
    past = total;
    ids = [BigInt(best)];
  }
  const end = performance.now();
  return {
    tokenIds,
    prefillMs: (newTokens > 1 ? decodeStart : end) - start,
    decodeMs: newTokens > 1 ? end - decodeStart : 0,
    decodeTokens: newTokens - 1,
  };
}
