import { serializeNpy } from '../npy/npy.js';
import { float32ToFloat16Bits } from '../tensor/float16.js';
import { runtimeFormat } from '../quant/runtime-formats/registry.js';
import { RuntimeFormatError, type FormatGeometry } from '../quant/runtime-formats/types.js';
import { ExitCode, UsageError, type CliIo } from './io.js';
import { choiceOption, optionalString, requireString, type RawOptions } from './options.js';
import { errorLines, readKvTensor, reconstructionReport, type ReconstructionReport } from './quantize-command.js';

/**
 * `kvscope quantize --format F` (a kvscope extension, issue 27): one KV tensor through a serving
 * runtime's own KV format (llama.cpp, vLLM/SGLang FP8, NVFP4, MLX, ONNX Runtime WebGPU), each head
 * vector quantized once as the runtime writes it; the reconstruction, the runtime's bytes
 * (`--blocks`: uint8 [batch·heads·seq, bytes per row]) and the error, reported as transformers'
 * backends are.
 */
export interface QuantizeFormatReport extends ReconstructionReport {
  readonly format: string;
  readonly runtime: string;
  readonly kvscope_extension: true;
  readonly side: 'key' | 'value';
  /** bytes one head vector takes as the runtime stores it */
  readonly row_bytes: number;
  /** the per-tensor scale used (vLLM's k_scale/v_scale, NVFP4's global scale), null where there is none */
  readonly tensor_scale: number | null;
}

/** Flags of transformers' path that mean nothing with --format. */
const BACKEND_FLAGS = ['backend', 'nbits', 'axis', 'group-size', 'codes', 'scale', 'zero'] as const;

export function runQuantizeFormat(options: RawOptions, io: CliIo): ExitCode {
  const format = runtimeFormatOption(requireString(options, 'format'));
  const clashing = BACKEND_FLAGS.filter((flag) => options[flag] !== undefined);
  if (clashing.length > 0) {
    throw new UsageError(`--format ${format.name} takes the runtime's own layout; drop ${clashing.map((f) => `--${f}`).join(', ')} (they set transformers' quanto/HQQ path).`);
  }
  const side = choiceOption(options, 'side', ['key', 'value'] as const, 'key');
  const calculate = options['calculate-kv-scales'] === true;
  if (calculate && format.tensorScale !== 'default-or-calculated') {
    throw new UsageError(`--calculate-kv-scales is vLLM's per-tensor FP8 scale; ${format.name} has ${format.tensorScale === 'none' ? 'no per-tensor scale' : 'a per-tensor scale it always computes from the data'}. Drop the flag.`);
  }
  const inputPath = requireString(options, 'input');
  const dequantizedPath = requireString(options, 'dequantized');
  for (const flag of ['dequantized', 'blocks'] as const) {
    const path = optionalString(options, flag);
    if (path !== undefined) io.checkOutputPath?.(path, `--${flag}`);
  }

  const input = readKvTensor(io, inputPath);
  const [batch, heads, seq, headDim] = input.shape;
  const geometry: FormatGeometry = { headDim, dtype: input.dtype, side };
  const refusal = format.refusal(geometry);
  if (refusal !== null) throw new RuntimeFormatError(`${format.name} refuses this tensor: ${refusal}`);

  const rows = batch * heads * seq;
  const rowBytes = format.rowBytes(geometry);
  const params = format.tensorParams(input.data, geometry, calculate);
  const blocks = new Uint8Array(rows * rowBytes);
  format.encodeRows(input.data, rows, geometry, params, blocks);
  const restored = new Float32Array(input.data.length);
  format.decodeRows(blocks, rows, geometry, params, restored);

  io.writeFileAtomic(dequantizedPath, serializeNpy(input.dtype === 'float16'
    ? { dtype: 'float16', shape: input.shape, data: float32ToFloat16Bits(restored) }
    : { dtype: 'float32', shape: input.shape, data: restored }));
  const blocksPath = optionalString(options, 'blocks');
  if (blocksPath !== undefined) io.writeFileAtomic(blocksPath, serializeNpy({ dtype: 'uint8', shape: [rows, rowBytes], data: blocks }));

  const report: QuantizeFormatReport = {
    format: format.name,
    runtime: format.runtime,
    kvscope_extension: true,
    side,
    ...reconstructionReport(input, restored, rows * rowBytes + format.tensorBytes),
    row_bytes: rowBytes,
    tensor_scale: format.tensorScale === 'none' ? null : params.tensorScale,
  };
  io.stdout(options['json'] === true ? JSON.stringify(report) + '\n' : formatReport(report, dequantizedPath, blocksPath));
  return ExitCode.ok;
}

function runtimeFormatOption(name: string): ReturnType<typeof runtimeFormat> {
  try {
    return runtimeFormat(name);
  } catch (error) {
    if (error instanceof RuntimeFormatError) throw new UsageError(`--format: ${error.message} See kvscope quantize --help.`);
    throw error;
  }
}

function formatReport(r: QuantizeFormatReport, outPath: string, blocksPath: string | undefined): string {
  const ratio = r.original_bytes / r.quantized_bytes;
  return [
    `${r.format} (${r.runtime}; a kvscope extension) on [${r.shape.join(', ')}] ${r.dtype}, ${r.side}s`,
    ...errorLines(r),
    `  bits_per_value ${r.bits_per_value.toFixed(3)} (${r.row_bytes} bytes per head vector, ${r.quantized_bytes} bytes, ${ratio.toFixed(2)}x smaller than ${r.dtype})`,
    ...(r.tensor_scale === null ? [] : [`  tensor_scale   ${r.tensor_scale}`]),
    `  wrote ${outPath}${blocksPath === undefined ? '' : ` and ${blocksPath}`}`,
    '',
  ].join('\n');
}
