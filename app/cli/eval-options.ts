import { defaultEvalText, DEFAULT_TEXT_NAME } from '../lab/default-text.js';
import { DEFAULT_CONTEXT, type EvalSettings, type EvalText } from '../lab/eval-settings.js';
import { KV_PARTS, type KvParts, type LabTargets } from '../lab/lab-targets.js';
import type { CliIo } from './io.js';
import { UsageError } from './io.js';
import { choiceOption, integerOption, optionalString, type RawOptions } from './options.js';
import { runSettingsFromOptions } from './run-command.js';

/** How eval reads `--text -`: the host's stdin (absent where there is none). */
export type ReadStdin = () => string;

/**
 * `kvscope eval`'s flags as EvalSettings. The model, execution provider and cache come from `run`'s
 * own parser (runSettingsFromOptions), so every cache option `run` understands, today's and those
 * added later, means the same here and in a sweep (whose keys are these flags' names).
 */
export function evalSettingsFromOptions(options: RawOptions, io: CliIo, readStdin?: ReadStdin): EvalSettings {
  const run = runSettingsFromOptions(options, io);
  const context = integerOption(options, 'context', DEFAULT_CONTEXT);
  const windowsFlag = options['windows'];
  const targets = targetsFromOptions(options);
  if (targets !== undefined && run.cacheMode === 'dynamic') {
    throw new UsageError('--quantize-layers and --quantize-parts choose what the quantized cache quantizes; they have no effect with --cache dynamic.');
  }
  return {
    model: run.model,
    ...(run.onnxFile !== undefined ? { onnxFile: run.onnxFile } : {}),
    executionProvider: run.executionProvider,
    cacheMode: run.cacheMode,
    quantization: run.quantization,
    text: readEvalText(options, io, readStdin),
    windows: {
      context,
      stride: integerOption(options, 'stride', context),
      prefill: integerOption(options, 'prefill', Math.floor(context / 2)),
      maxWindows: windowsFlag === undefined ? null : integerOption(options, 'windows'),
    },
    ...(options['feed'] === undefined ? {} : { feed: choiceOption(options, 'feed', ['auto', 'chunked', 'token-by-token'] as const) }),
    ...(targets === undefined ? {} : { targets }),
    ...(run.dequantize === undefined ? {} : { dequantize: run.dequantize }),
  };
}

/** `--text FILE`, `--text -` (stdin), or kvscope's own default text. */
function readEvalText(options: RawOptions, io: CliIo, readStdin: ReadStdin | undefined): EvalText {
  const path = optionalString(options, 'text');
  if (path === undefined) return { name: DEFAULT_TEXT_NAME, content: defaultEvalText() };
  if (path === '-') {
    if (readStdin === undefined) throw new UsageError('--text - reads the text from stdin, which this host does not have. Pass a file.');
    return { name: '-', content: readStdin() };
  }
  if (io.isDirectory(path)) throw new UsageError(`--text ${path} is a folder; pass a text file (UTF-8).`);
  return { name: path, content: io.readTextFile(path) };
}

/** `--quantize-layers 0,3` (or `all`) and `--quantize-parts key|value|both`: the lab's targets (a kvscope extension). */
function targetsFromOptions(options: RawOptions): LabTargets | undefined {
  const layersFlag = optionalString(options, 'quantize-layers');
  const partsFlag = options['quantize-parts'];
  if (layersFlag === undefined && partsFlag === undefined) return undefined;
  const parts = choiceOption<KvParts>(options, 'quantize-parts', KV_PARTS, 'both');
  if (layersFlag === undefined || layersFlag.trim() === 'all') return { layers: null, parts };
  const layers = layersFlag.split(',').map((item) => item.trim());
  if (layers.length === 0 || layers.some((item) => !/^\d+$/.test(item))) {
    throw new UsageError(`--quantize-layers must be a comma-separated list of layer indices (0,3,5) or all, got ${JSON.stringify(layersFlag)}.`);
  }
  return { layers: [...new Set(layers.map(Number))].sort((a, b) => a - b), parts };
}
