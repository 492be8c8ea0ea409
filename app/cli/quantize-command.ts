import { parseNpy, serializeNpy, type NpyArray } from '../npy/npy.js';
import { float16BitsToFloat32, float32ToFloat16Bits } from '../tensor/float16.js';
import { kvTensor, type KvDtype, type KvShape, type KvTensor } from '../tensor/kv-tensor.js';
import { errorStats } from '../quant/error-stats.js';
import { QUANT_BACKENDS, quantizerFor } from '../quant/registry.js';
import { quantizedByteSize, type QuantizedTensor } from '../quant/types.js';
import { ExitCode, UsageError, type CliIo } from './io.js';
import { choiceOption, integerOption, optionalString, requireString, type RawOptions } from './options.js';

/**
 * `kvscope quantize`: quantize one KV tensor from a `.npy` file exactly as transformers'
 * `QuantizedCache` would (quanto or HQQ), write the reconstruction (and optionally codes, scale and
 * zero in the golden files' layout) and report the error.
 */
/** What both quantize paths report of a reconstruction (transformers' backends and the runtimes' formats). */
export interface ReconstructionReport {
  readonly shape: readonly number[];
  readonly dtype: KvDtype;
  readonly rel_fro_err: number;
  readonly max_abs_err: number;
  readonly mean_abs_err: number;
  readonly snr_db: number | null;
  /** the stored bytes per value (codes with their scales; a format's rows with its per-tensor scale) */
  readonly bits_per_value: number;
  readonly quantized_bytes: number;
  readonly original_bytes: number;
}

export interface QuantizeReport extends ReconstructionReport {
  readonly backend: string;
  readonly nbits: number;
  readonly axis: number;
  readonly group_size: number;
}

/** The error and size figures of `restored` against `input`, for `quantizedBytes` stored. */
export function reconstructionReport(input: KvTensor, restored: Float32Array, quantizedBytes: number): ReconstructionReport {
  const stats = errorStats(input.data, restored);
  return {
    shape: [...input.shape],
    dtype: input.dtype,
    rel_fro_err: stats.relFroErr,
    max_abs_err: stats.maxAbsErr,
    mean_abs_err: stats.meanAbsErr,
    snr_db: Number.isFinite(stats.snrDb) ? stats.snrDb : null,
    bits_per_value: (quantizedBytes * 8) / input.data.length,
    quantized_bytes: quantizedBytes,
    original_bytes: input.data.length * (input.dtype === 'float16' ? 2 : 4),
  };
}

/** The report's error lines, as both quantize paths print them. */
export function errorLines(r: ReconstructionReport): string[] {
  return [
    `  rel_fro_err    ${r.rel_fro_err.toExponential(4)}`,
    `  max_abs_err    ${r.max_abs_err.toExponential(4)}`,
    `  mean_abs_err   ${r.mean_abs_err.toExponential(4)}`,
    `  snr            ${r.snr_db === null ? 'exact' : `${r.snr_db.toFixed(2)} dB`}`,
  ];
}

export function runQuantize(options: RawOptions, io: CliIo): ExitCode {
  const formatOnly = (['blocks', 'side', 'calculate-kv-scales'] as const).filter((flag) => options[flag] !== undefined);
  if (formatOnly.length > 0) {
    throw new UsageError(`${formatOnly.map((f) => `--${f}`).join(', ')} belong to --format (a serving runtime's KV format); add --format F or drop them.`);
  }
  const backend = choiceOption(options, 'backend', QUANT_BACKENDS);
  const nbits = integerOption(options, 'nbits');
  const axis = integerOption(options, 'axis');
  const groupSize = integerOption(options, 'group-size');
  const inputPath = requireString(options, 'input');
  const dequantizedPath = requireString(options, 'dequantized');
  // Every output is checked before the tensor is read and quantized, not found unwritable after.
  for (const flag of ['dequantized', 'codes', 'scale', 'zero'] as const) {
    const path = optionalString(options, flag);
    if (path !== undefined) io.checkOutputPath?.(path, `--${flag}`);
  }

  const input = readKvTensor(io, inputPath);
  const quantizer = quantizerFor(backend);
  const quantized = quantizer.quantize(input, { nbits, axis, groupSize });
  const restored = quantizer.dequantize(quantized);

  io.writeFileAtomic(dequantizedPath, serializeNpy(toNpy(restored.data, input.shape, input.dtype)));
  const codesPath = optionalString(options, 'codes');
  if (codesPath !== undefined) {
    io.writeFileAtomic(codesPath, serializeNpy({ dtype: 'uint8', shape: quantized.gridShape, data: quantizer.unpackCodes(quantized) }));
  }
  // Scale and zero are written as float32, the golden files' dtype; for a float16 input their values
  // are already rounded to float16, as transformers stores them.
  const scalePath = optionalString(options, 'scale');
  if (scalePath !== undefined) io.writeFileAtomic(scalePath, serializeNpy({ dtype: 'float32', shape: quantized.paramShape, data: quantized.scale }));
  const zeroPath = optionalString(options, 'zero');
  if (zeroPath !== undefined) io.writeFileAtomic(zeroPath, serializeNpy({ dtype: 'float32', shape: quantized.paramShape, data: quantized.zero }));

  const report = quantizeReport(input, restored, quantized);
  io.stdout(options['json'] === true ? JSON.stringify(report) + '\n' : formatReport(report, dequantizedPath));
  return ExitCode.ok;
}

export function quantizeReport(input: KvTensor, restored: KvTensor, quantized: QuantizedTensor): QuantizeReport {
  return {
    backend: quantized.backend,
    nbits: quantized.params.nbits,
    axis: quantized.params.axis,
    group_size: quantized.params.groupSize,
    ...reconstructionReport(input, restored.data, quantizedByteSize(quantized)),
  };
}

function formatReport(r: QuantizeReport, outPath: string): string {
  const ratio = r.original_bytes / r.quantized_bytes;
  return [
    `${r.backend} int${r.nbits}, axis ${r.axis}, group ${r.group_size} on [${r.shape.join(', ')}] ${r.dtype}`,
    ...errorLines(r),
    `  bits_per_value ${r.bits_per_value.toFixed(3)} (${r.quantized_bytes} bytes, ${ratio.toFixed(2)}x smaller than ${r.dtype})`,
    `  wrote ${outPath}`,
    '',
  ].join('\n');
}

/** Reads a float32 or float16 `.npy` holding a 4-D KV tensor `[batch, kv_heads, seq, head_dim]`. */
export function readKvTensor(io: CliIo, path: string): KvTensor {
  if (!path.toLowerCase().endsWith('.npy')) {
    throw new UsageError(`${path} is not a .npy file. Save the tensor with numpy.save("x.npy", k.float().numpy()).`);
  }
  const array = parseNpy(io.readFile(path, 'npy'), path);
  if (array.dtype !== 'float32' && array.dtype !== 'float16') {
    throw new UsageError(`${path} holds ${array.dtype} values; kvscope quantizes float32 or float16 KV tensors. Convert with x.astype(numpy.float32).`);
  }
  if (array.shape.length !== 4) {
    const hint = array.shape.length < 4 ? ` Add the missing leading axes, e.g. x.reshape(${[...Array(4 - array.shape.length).fill(1), ...array.shape].join(', ')}).` : '';
    throw new UsageError(`${path} has shape (${array.shape.join(', ')}); a KV tensor is 4-D [batch, kv_heads, seq, head_dim].${hint}`);
  }
  const data = array.dtype === 'float16' ? float16BitsToFloat32(array.data as Uint16Array) : (array.data as Float32Array);
  return kvTensor(array.shape as unknown as KvShape, array.dtype, data);
}

function toNpy(data: Float32Array, shape: KvShape, dtype: KvDtype): NpyArray {
  return dtype === 'float16'
    ? { dtype: 'float16', shape, data: float32ToFloat16Bits(data) }
    : { dtype: 'float32', shape, data };
}
