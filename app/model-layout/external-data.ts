import { modelError, modelWarning, type ModelDiagnostic } from '../engine/model-diagnostic.js';
import { externalDataFiles, type GraphHeader } from '../onnx/graph-header.js';
import { directoryOf } from './graph-files.js';
import type { FolderListing } from './model-layout.js';
import { expectedExternalChunks, externalChunkName, type TransformersJsConfig } from './transformers-js-config.js';

/** The external data a graph references, found (or not) beside it. */
export interface ExternalDataReport {
  /** relative to the folder; `bytes` on disk */
  readonly files: readonly { readonly path: string; readonly bytes: number }[];
  /** referenced but absent, relative to the folder */
  readonly missing: readonly string[];
  /** the graph file plus every external data file it references that is there */
  readonly totalBytes: number;
  readonly diagnostics: readonly ModelDiagnostic[];
}

/**
 * Every external data file the graph's initializers point at (whatever its name: `model.onnx.data`,
 * `model.onnx_data`, `model_q4.onnx_data_1`, …), sized from the folder listing, plus transformers.js'
 * `use_external_data_format` expectation. A missing file is an error here, before any session: ORT
 * would otherwise fail while loading, after seconds of reading the graph.
 */
export function externalDataReport(header: GraphHeader, graph: string, listing: FolderListing, transformersJs: TransformersJsConfig | null): ExternalDataReport {
  const dir = directoryOf(graph);
  const sizes = new Map(listing.files.map((file) => [file.path, file.bytes]));
  const relative = (location: string): string => normalize(dir === '' ? location : `${dir}/${location}`);
  const externals = externalDataFiles(header).map((file) => ({ ...file, path: relative(file.location) }));
  const referenced = externals.map((file) => file.path);
  const files = referenced.filter((path) => sizes.has(path)).map((path) => ({ path, bytes: sizes.get(path)! }));
  const missing = referenced.filter((path) => !sizes.has(path));
  const diagnostics: ModelDiagnostic[] = [];
  const graphName = graph.slice(graph.lastIndexOf('/') + 1);
  if (missing.length > 0) {
    diagnostics.push(modelError('onnx-external-data-missing',
      `${graph} keeps weights in external data file(s) that are not in the folder: ${missing.join(', ')}.`,
      `Download ${missing.join(', ')} into ${dir === '' ? 'the folder' : `${dir}/`}, beside ${graphName} (onnxruntime looks for them there).`));
  }
  for (const file of externals) {
    const size = sizes.get(file.path);
    if (size !== undefined && size < file.end) diagnostics.push(shortExternalData(file.path, size, file.end, graphName));
  }
  const chunks = transformersJs === null ? 0 : expectedExternalChunks(transformersJs, graphName);
  if (chunks > 0) {
    const expected = Array.from({ length: chunks }, (_, index) => relative(externalChunkName(graphName, index)));
    const absent = expected.filter((path) => !sizes.has(path) && !missing.includes(path));
    const unreferenced = expected.filter((path) => sizes.has(path) && !referenced.includes(path));
    if (absent.length > 0) {
      diagnostics.push(modelWarning('onnx-external-data-missing',
        `config.json's transformers.js_config.use_external_data_format says ${graphName} has ${chunks} external data file(s), but ${absent.join(', ')} is not in the folder.`,
        `Download ${absent.join(', ')} if the graph needs it (onnxruntime reads only the files the graph references${missing.length === 0 ? ', and this graph references none missing' : ''}).`));
    }
    if (unreferenced.length > 0) {
      diagnostics.push(modelWarning('onnx-external-data-missing',
        `${unreferenced.join(', ')} sits beside ${graphName} as transformers.js_config says, but the graph references no tensor in it.`,
        'Check that the data file belongs to this graph (a re-exported graph may use other chunk names).'));
    }
  }
  const totalBytes = (sizes.get(graph) ?? 0) + files.reduce((sum, file) => sum + file.bytes, 0);
  return { files, missing, totalBytes, diagnostics };
}

/**
 * An external data file smaller than the header's furthest initializer byte: empty, cut short by an
 * interrupted download, or a Git LFS pointer of ~130 bytes (a clone without `git lfs pull`; the Node
 * reader names that one by its text first). onnxruntime would fail while loading, after reading the graph.
 */
function shortExternalData(path: string, size: number, end: number, graphName: string): ModelDiagnostic {
  const what = size === 0 ? 'is empty' : size < 1024 ? `holds ${size} bytes (a Git LFS pointer is this small)` : `is truncated: ${size} bytes`;
  return modelError('onnx-external-data-missing',
    `${path} ${what}, but ${graphName}'s weights reach byte ${end} of it.`,
    `Download ${path} again (an interrupted download leaves it short); in a git clone of the model repository, run \`git lfs pull\`.`);
}

/** `a/./b`, `a/x/../b` → `a/b` (locations are relative to the graph's folder). */
function normalize(path: string): string {
  const parts: string[] = [];
  for (const part of path.replace(/\\/g, '/').split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  return parts.join('/');
}
