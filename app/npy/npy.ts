import { NpyFormatError } from '../errors.js';

/**
 * NumPy `.npy` format v1/v2/v3, little-endian, C order: the dtypes kvscope exchanges with Python.
 * Layout: magic `\x93NUMPY`, version (2 bytes), header length (u16 for v1, u32 for v2/v3), an ASCII
 * Python-dict header padded with spaces to a 64-byte boundary and ending in `\n`, then the raw data.
 */
export type NpyDtype = 'float32' | 'float16' | 'uint8' | 'float64' | 'int32' | 'int64';

export interface NpyArray {
  readonly dtype: NpyDtype;
  readonly shape: readonly number[];
  /** float16 arrives as its bit patterns; int64 as BigInt64Array */
  readonly data: Float32Array | Uint16Array | Uint8Array | Float64Array | Int32Array | BigInt64Array;
}

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY

const DESCRIPTORS: Record<string, { dtype: NpyDtype; bytes: number }> = {
  '<f4': { dtype: 'float32', bytes: 4 },
  '<f2': { dtype: 'float16', bytes: 2 },
  '|u1': { dtype: 'uint8', bytes: 1 },
  '<u1': { dtype: 'uint8', bytes: 1 },
  '<f8': { dtype: 'float64', bytes: 8 },
  '<i4': { dtype: 'int32', bytes: 4 },
  '<i8': { dtype: 'int64', bytes: 8 },
};

const DESCRIPTOR_OF: Record<NpyDtype, string> = {
  float32: '<f4', float16: '<f2', uint8: '|u1', float64: '<f8', int32: '<i4', int64: '<i8',
};

export function parseNpy(bytes: Uint8Array, name = 'the file'): NpyArray {
  if (bytes.length < 10 || MAGIC.some((b, i) => bytes[i] !== b)) {
    throw new NpyFormatError(`${name} is not a NumPy .npy file (it does not start with \\x93NUMPY). Save the array with numpy.save().`);
  }
  const major = bytes[6]!;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let headerLength: number;
  let headerStart: number;
  if (major === 1) {
    headerLength = view.getUint16(8, true);
    headerStart = 10;
  } else if (major === 2 || major === 3) {
    if (bytes.length < 12) throw new NpyFormatError(`${name} is truncated inside its .npy header.`);
    headerLength = view.getUint32(8, true);
    headerStart = 12;
  } else {
    throw new NpyFormatError(`${name} uses .npy format version ${major}, which kvscope does not read (expected 1, 2 or 3).`);
  }
  const dataStart = headerStart + headerLength;
  if (dataStart > bytes.length) throw new NpyFormatError(`${name} is truncated: its .npy header claims ${headerLength} bytes.`);
  const header = String.fromCharCode(...bytes.subarray(headerStart, dataStart));
  const descr = /'descr'\s*:\s*'([^']+)'/.exec(header)?.[1];
  const fortran = /'fortran_order'\s*:\s*(True|False)/.exec(header)?.[1];
  const shapeText = /'shape'\s*:\s*\(([^)]*)\)/.exec(header)?.[1];
  if (descr === undefined || fortran === undefined || shapeText === undefined) {
    throw new NpyFormatError(`${name} has a malformed .npy header: ${header.trim()}`);
  }
  if (fortran === 'True') {
    throw new NpyFormatError(`${name} is stored in Fortran order; save it C-contiguous (numpy.ascontiguousarray) and try again.`);
  }
  const descriptor = DESCRIPTORS[descr];
  if (descriptor === undefined) {
    throw new NpyFormatError(`${name} has dtype '${descr}', which kvscope does not read. Supported: ${Object.keys(DESCRIPTORS).join(', ')} (little-endian).`);
  }
  const shape = shapeText.split(',').map((s) => s.trim()).filter((s) => s.length > 0).map((s) => Number(s));
  if (shape.some((d) => !Number.isInteger(d) || d < 0)) throw new NpyFormatError(`${name} has an invalid shape (${shapeText}).`);
  const count = shape.reduce((a, b) => a * b, 1);
  const byteCount = count * descriptor.bytes;
  if (bytes.length - dataStart < byteCount) {
    throw new NpyFormatError(`${name} is truncated: shape (${shape.join(', ')}) needs ${byteCount} data bytes, found ${bytes.length - dataStart}.`);
  }
  // Copy into an aligned buffer of its own: the data offset need not be a multiple of the element size.
  // Uint8Array's slice, not the argument's: Node's Buffer#slice returns a view over the whole file.
  const raw = Uint8Array.prototype.slice.call(bytes, dataStart, dataStart + byteCount).buffer;
  return { dtype: descriptor.dtype, shape, data: typedArrayOf(descriptor.dtype, raw) };
}

function typedArrayOf(dtype: NpyDtype, raw: ArrayBuffer): NpyArray['data'] {
  switch (dtype) {
    case 'float32': return new Float32Array(raw);
    case 'float16': return new Uint16Array(raw);
    case 'uint8': return new Uint8Array(raw);
    case 'float64': return new Float64Array(raw);
    case 'int32': return new Int32Array(raw);
    case 'int64': return new BigInt64Array(raw);
    default: throw new NpyFormatError(`unknown dtype ${String(dtype)}`);
  }
}

/** Serializes an array as `.npy` v1.0 (the format numpy.save writes for small headers). */
export function serializeNpy(array: NpyArray): Uint8Array {
  const shape = array.shape.length === 1 ? `(${array.shape[0]},)` : `(${array.shape.join(', ')})`;
  let header = `{'descr': '${DESCRIPTOR_OF[array.dtype]}', 'fortran_order': False, 'shape': ${shape}, }`;
  const unpadded = 10 + header.length + 1;
  header += ' '.repeat((64 - (unpadded % 64)) % 64) + '\n';
  const data = new Uint8Array(array.data.buffer, array.data.byteOffset, array.data.byteLength);
  const out = new Uint8Array(10 + header.length + data.byteLength);
  out.set(MAGIC, 0);
  out[6] = 1;
  out[7] = 0;
  new DataView(out.buffer).setUint16(8, header.length, true);
  for (let i = 0; i < header.length; i++) out[10 + i] = header.charCodeAt(i);
  out.set(data, 10 + header.length);
  return out;
}
