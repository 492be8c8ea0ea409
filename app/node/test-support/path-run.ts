import { performance } from 'node:perf_hooks';
import type { DecoderSession, SessionFeeds, SessionOutputs } from '../../engine/decoder-session.js';
import { generate } from '../../engine/generate.js';
import { planRunCache } from '../../engine/plan-run-cache.js';
import type { RunSettings } from '../../engine/types.js';
import { encodePrompt } from '../model/load-tokenizer.js';
import { openInGraphModel } from '../model/open-in-graph-model.js';
import { openModelSession, readModelFiles, type OpenedModel } from '../model/open-model.js';
import { resolveModelPath } from '../run-generation.js';

/** Copies every run's logits (a session's outputs may be freed once the step is done). */
export class LogitsRecorder implements DecoderSession {
  readonly logits: Uint8Array[] = [];
  constructor(readonly inner: DecoderSession) {}
  get inputs(): DecoderSession['inputs'] { return this.inner.inputs; }
  get outputs(): DecoderSession['outputs'] { return this.inner.outputs; }
  get executionProvider(): DecoderSession['executionProvider'] { return this.inner.executionProvider; }
  async run(feeds: SessionFeeds): Promise<SessionOutputs> {
    const outputs = await this.inner.run(feeds);
    const data = outputs['logits']!.data;
    this.logits.push(new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice());
    return outputs;
  }
  release(outputs: Parameters<NonNullable<DecoderSession['release']>>[0]): void { this.inner.release?.(outputs); }
  dispose(): Promise<void> { return this.inner.dispose(); }
}

export interface PathRun {
  readonly logits: Uint8Array[];
  readonly ids: readonly number[];
  readonly flushCounts: readonly (number | null)[];
  readonly kvTotal: number;
  readonly materialized: readonly number[];
  readonly executionProvider: string;
}

/** One greedy run through the engine on one path, recording every step's logits bits. */
export async function runPath(settings: RunSettings, path: 'graph' | 'host'): Promise<PathRun> {
  const files = await readModelFiles(await resolveModelPath(settings.model), settings.onnxFile);
  const promptTokenIds = encodePrompt(files.tokenizer!, settings.prompt, files.specialTokens.bosTokenId, settings.promptFormat);
  const cachePlan = planRunCache(files.config, settings, promptTokenIds.length);
  let model: OpenedModel;
  let inGraph;
  if (path === 'graph') {
    const opened = await openInGraphModel(files, settings, cachePlan.plan!);
    if ('reason' in opened) throw new Error(opened.reason);
    model = opened;
    inGraph = opened.inGraph;
  } else {
    model = await openModelSession(files, settings.executionProvider);
  }
  const recorder = new LogitsRecorder(model.session);
  try {
    const outcome = await generate({
      session: recorder, io: model.io, config: model.config, settings, promptTokenIds,
      eosTokenIds: model.specialTokens.eosTokenIds, decodeText: model.tokenizer?.decode ?? ((ids: readonly number[]) => ids.join(' ')), now: () => performance.now(), cachePlan,
      ...(inGraph === undefined ? {} : { inGraph }),
    });
    return {
      logits: recorder.logits, ids: outcome.generatedTokenIds, flushCounts: outcome.flushCounts, kvTotal: outcome.kvBytesTotal.totalBytes,
      materialized: outcome.steps.map((step) => step.materializedKvBytes),
      executionProvider: model.session.executionProvider,
    };
  } finally {
    await model.dispose();
  }
}

