import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import type { SyntheticModelKind } from '../../../synthetic/synthetic-spec.js';
import { ensureSyntheticModel } from '../ensure-synthetic-model.js';

/** Tolerances of the synthetic-model tests, in one place (STYLE.md §13). */
export const TOLERANCE = {
  /** max |Δlogit| between mathematically equal runs that differ in how the sequence is chunked */
  logits: 1e-4,
  /** max |Δ| of cached keys/values between such runs */
  kv: 1e-4,
} as const;

/**
 * One cache shared by every test file and run: the first file to need a model builds it, later ones
 * (and concurrent ones, through the atomic publish) reuse it.
 */
export function testCacheDir(): string {
  return join(tmpdir(), 'kvscope-test-cache', 'models');
}

export interface SyntheticGeometry {
  readonly numLayers: number;
  readonly numKeyValueHeads: number;
  readonly headDim: number;
  readonly vocabSize: number;
  readonly slidingWindow: number | null;
  readonly layerTypes: readonly string[] | null;
  readonly outlierKeyChannels: ReadonlyArray<readonly number[]>;
  readonly mutedTokenIds: readonly number[];
}

export interface SyntheticSession {
  readonly folder: string;
  readonly session: ort.InferenceSession;
  readonly geometry: SyntheticGeometry;
}

export async function openSyntheticSession(kind: SyntheticModelKind): Promise<SyntheticSession> {
  const folder = await ensureSyntheticModel(kind, { cacheDir: testCacheDir() });
  const config = JSON.parse(readFileSync(join(folder, 'config.json'), 'utf8')) as Record<string, unknown>;
  const synthetic = config['kvscope_synthetic'] as { outlier_key_channels: number[][]; muted_token_ids: number[] };
  const geometry: SyntheticGeometry = {
    numLayers: config['num_hidden_layers'] as number,
    numKeyValueHeads: config['num_key_value_heads'] as number,
    headDim: config['head_dim'] as number,
    vocabSize: config['vocab_size'] as number,
    slidingWindow: (config['sliding_window'] as number | undefined) ?? null,
    layerTypes: (config['layer_types'] as string[] | undefined) ?? null,
    outlierKeyChannels: synthetic.outlier_key_channels,
    mutedTokenIds: synthetic.muted_token_ids,
  };
  // One intra-op thread: tests run in parallel forks, and results must not depend on thread count
  const session = await ort.InferenceSession.create(join(folder, 'onnx', 'model.onnx'), { intraOpNumThreads: 1 });
  return { folder, session, geometry };
}

/** `present.{i}.key|value` of the previous step, fed back as `past_key_values.{i}.key|value`. */
export type KvState = ReadonlyMap<string, ort.Tensor>;

export interface StepInput {
  /** [batch][seq] token ids */
  readonly ids: ReadonlyArray<readonly number[]>;
  /** [batch][seq]; default past + i */
  readonly positions?: ReadonlyArray<readonly number[]>;
  /** [batch][past + seq]; default all ones */
  readonly attentionMask?: ReadonlyArray<readonly number[]>;
  readonly past?: KvState;
}

export interface StepOutput {
  /** [batch, seq, vocab] */
  readonly logits: Float32Array;
  readonly present: KvState;
  /** the past length of the next step */
  readonly length: number;
}

export async function runStep(model: SyntheticSession, input: StepInput): Promise<StepOutput> {
  const { numLayers, numKeyValueHeads, headDim } = model.geometry;
  const batch = input.ids.length;
  const sequence = input.ids[0].length;
  const pastLength = input.past?.get('present.0.key')?.dims[2] ?? 0;
  const total = pastLength + sequence;
  const int64 = (rows: ReadonlyArray<readonly number[]>, width: number): ort.Tensor =>
    new ort.Tensor('int64', BigInt64Array.from(rows.flat(), (value) => BigInt(value)), [batch, width]);
  const feeds: Record<string, ort.Tensor> = {
    input_ids: int64(input.ids, sequence),
    position_ids: int64(input.positions ?? input.ids.map((row) => row.map((_, i) => pastLength + i)), sequence),
    attention_mask: int64(input.attentionMask ?? input.ids.map(() => Array<number>(total).fill(1)), total),
  };
  const empty = new ort.Tensor('float32', new Float32Array(0), [batch, numKeyValueHeads, 0, headDim]);
  for (let layer = 0; layer < numLayers; layer++) {
    for (const part of ['key', 'value']) {
      feeds[`past_key_values.${layer}.${part}`] = input.past?.get(`present.${layer}.${part}`) ?? empty;
    }
  }
  const outputs = await model.session.run(feeds);
  const present = new Map(Object.entries(outputs).filter(([name]) => name.startsWith('present.')));
  return { logits: outputs['logits'].data as Float32Array, present, length: total };
}

/** Logits row of (batch b, position t) from a [batch, seq, vocab] array. */
export function logitsAt(output: StepOutput, vocabSize: number, sequence: number, b: number, t: number): Float32Array {
  const start = (b * sequence + t) * vocabSize;
  return output.logits.subarray(start, start + vocabSize);
}

export function argmax(row: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < row.length; i++) if (row[i] > row[best]) best = i;
  return best;
}

/** Prefill `prompt`, then greedy decoding one token at a time. */
export async function greedy(model: SyntheticSession, prompt: readonly number[], newTokens: number): Promise<number[]> {
  const { vocabSize } = model.geometry;
  let step = await runStep(model, { ids: [prompt] });
  let next = argmax(logitsAt(step, vocabSize, prompt.length, 0, prompt.length - 1));
  const out = [next];
  while (out.length < newTokens) {
    step = await runStep(model, { ids: [[next]], past: step.present });
    next = argmax(logitsAt(step, vocabSize, 1, 0, 0));
    out.push(next);
  }
  return out;
}
