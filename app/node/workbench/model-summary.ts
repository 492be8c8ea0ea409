import { basename } from 'node:path';
import type { ModelDiagnostic } from '../../engine/model-diagnostic.js';
import { vocabularySize } from '../../engine/prompt-token-ids.js';
import type { ModelSource, ModelSummary } from '../../protocol/workbench-api.js';
import type { ModelInspection } from '../model/inspect-model.js';

/** What the workbench shows about an opened model, from the model checks' inspection. */
export function toModelSummary(source: ModelSource, inspection: ModelInspection): ModelSummary {
  const folder = inspection.folder?.folder ?? null;
  return {
    source,
    displayName: source.kind === 'folder' ? basename(folder ?? source.path) : source.kind,
    folder,
    onnxFiles: inspection.variants.map((variant) => variant.file),
    onnxFile: inspection.variant?.file ?? null,
    config: inspection.config,
    kvDtype: inspection.io?.kvDtype ?? null,
    layout: inspection.layoutSummary,
    chatTemplate: inspection.chatTemplate,
    hasTokenizer: inspection.hasTokenizer,
    vocabSize: vocabularySize(inspection.io?.logitsShape, inspection.config?.geometry.vocabSize ?? null),
    diagnostics: inspection.diagnostics,
    ok: inspection.ok,
  };
}

/** A summary for a model that could not even be located (a synthetic model that failed to build). */
export function unopenedModelSummary(source: ModelSource, diagnostic: ModelDiagnostic): ModelSummary {
  return {
    source,
    displayName: source.kind === 'folder' ? basename(source.path) : source.kind,
    folder: null,
    onnxFiles: [],
    onnxFile: null,
    config: null,
    kvDtype: null,
    layout: null,
    chatTemplate: null,
    diagnostics: [diagnostic],
    ok: false,
  };
}
