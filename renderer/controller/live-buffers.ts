import type { ModelSummary } from '../../app/protocol/workbench-api.js';
import type { RunSettings } from '../../app/engine/types.js';
import type { RunRecord } from '../../app/record/run-record.js';
import { modelName } from '../../app/record/run-summary.js';
import { RunMetrics } from '../metrics/run-metrics.js';
import { TextStream } from '../metrics/text-stream.js';

/** A run's streaming data, held outside React: the charts and the text view read it on frames. */
export interface RunBuffers {
  readonly metrics: RunMetrics;
  readonly text: TextStream;
  /** per decoder layer, what it really is (for the layer axis labels); empty when unknown */
  readonly layerKinds: readonly string[];
  /** per decoder layer, whether the run quantizes it */
  readonly quantizedLayers: readonly boolean[];
  /** the model's name and graph, for titles and exported figures */
  readonly modelLabel: string;
}

export function buffersForRun(settings: RunSettings, summary: ModelSummary): RunBuffers {
  const config = summary.config;
  const layerCount = config?.layers.numLayers ?? 0;
  const policy = settings.quantization.layerPolicy;
  const layerKinds = config?.layers.layers.map((layer) => layer.actualKind) ?? [];
  const quantizedLayers = config?.layers.layers.map((layer) =>
    settings.cacheMode === 'quantized' && layer.hasKvCache && (policy === 'all' || layer.actualKind === 'full_attention')) ?? [];
  return {
    metrics: new RunMetrics({
      layerCount,
      expectedSteps: settings.maxNewTokens,
      residualLength: settings.cacheMode === 'quantized' ? settings.quantization.residualLength : null,
      kvBytesPerValue: summary.kvDtype === 'float16' ? 2 : 4,
    }),
    text: new TextStream(),
    layerKinds,
    quantizedLayers,
    modelLabel: `${summary.displayName}${summary.onnxFile !== null ? ` (${summary.onnxFile})` : ''}`,
  };
}

/** A saved run's charts come from its record, through the same buffers as a live run. */
export function buffersForRecord(record: RunRecord): RunBuffers {
  const layerCount = record.model.numLayers || (record.steps[0]?.kvBytes.length ?? 0);
  const metrics = new RunMetrics({
    layerCount,
    expectedSteps: Math.max(1, record.steps.length),
    residualLength: record.settings.cacheMode === 'quantized' ? record.settings.quantization.residualLength : null,
    kvBytesPerValue: record.model.kvDtype === 'float16' ? 2 : 4,
  });
  metrics.append(record.steps);
  const text = new TextStream();
  text.append(record.text, record.generatedTokenIds);
  const quantizedLayers = record.layerErrors.map((error) => error !== null);
  return { metrics, text, layerKinds: record.model.layerKinds ?? [], quantizedLayers, modelLabel: `${modelName(record)} (${record.model.onnxFile})` };
}
