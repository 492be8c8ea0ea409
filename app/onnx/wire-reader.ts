import { getTextEncoding } from '@bufbuild/protobuf/wire';
import type { ByteSource } from './byte-source.js';
import { OnnxFormatError } from './onnx-errors.js';

/** Protobuf wire types (protobuf.dev/programming-guides/encoding). Groups (3, 4) are not used by onnx.proto. */
export const WireType = { varint: 0, fixed64: 1, lengthDelimited: 2, fixed32: 5 } as const;

/** One field of a message as it lies in the source: its number, wire type and where its payload is. */
export interface WireField {
  readonly number: number;
  readonly wireType: number;
  /** first byte of the payload (for length-delimited fields, after the length) */
  readonly start: number;
  /** one past the payload's last byte */
  readonly end: number;
  /** the value of a varint field (0n for other wire types) */
  readonly varint: bigint;
}

/**
 * Reads a ByteSource through one sliding window, so that walking thousands of small fields costs a
 * few large reads, and skipping a field (a weight's raw_data) costs nothing. Offsets are absolute.
 */
export class WindowedReader {
  readonly #source: ByteSource;
  readonly #windowBytes: number;
  #window: Uint8Array = new Uint8Array(0);
  #windowStart = 0;

  constructor(source: ByteSource, readonly fileName: string, windowBytes = 64 << 10) {
    this.#source = source;
    this.#windowBytes = windowBytes;
  }

  get size(): number {
    return this.#source.size;
  }

  /** The bytes [offset, offset + length): a view of the window when it holds them, else one read. */
  async bytes(offset: number, length: number): Promise<Uint8Array> {
    if (offset + length > this.#source.size) throw this.truncated(offset);
    if (offset >= this.#windowStart && offset + length <= this.#windowStart + this.#window.length) {
      return this.#window.subarray(offset - this.#windowStart, offset - this.#windowStart + length);
    }
    if (length > this.#windowBytes / 2) return this.#source.read(offset, length);
    this.#window = await this.#source.read(offset, Math.min(this.#windowBytes, this.#source.size - offset));
    this.#windowStart = offset;
    return this.#window.subarray(0, length);
  }

  /** Fields of the message in [start, end), in order. */
  async *fields(start: number, end: number): AsyncGenerator<WireField> {
    let offset = start;
    while (offset < end) {
      const tag = await this.#varint(offset, end);
      offset = tag.next;
      const number = Number(tag.value >> 3n);
      const wireType = Number(tag.value & 7n);
      if (number === 0) throw this.corrupt(offset, 'a field numbered 0');
      switch (wireType) {
        case WireType.varint: {
          const value = await this.#varint(offset, end);
          yield { number, wireType, start: offset, end: value.next, varint: value.value };
          offset = value.next;
          break;
        }
        case WireType.fixed64:
        case WireType.fixed32: {
          const length = wireType === WireType.fixed64 ? 8 : 4;
          if (offset + length > end) throw this.truncated(offset);
          yield { number, wireType, start: offset, end: offset + length, varint: 0n };
          offset += length;
          break;
        }
        case WireType.lengthDelimited: {
          const length = await this.#varint(offset, end);
          const payloadEnd = length.next + Number(length.value);
          if (payloadEnd > end) throw this.truncated(length.next);
          yield { number, wireType, start: length.next, end: payloadEnd, varint: 0n };
          offset = payloadEnd;
          break;
        }
        default:
          throw this.corrupt(offset, `wire type ${wireType} (field ${number})`);
      }
    }
  }

  /** A length-delimited field's payload as UTF-8 text. */
  async text(field: WireField): Promise<string> {
    // protobuf-es's own UTF-8 (the pure core's ES library has no TextDecoder type)
    return getTextEncoding().decodeUtf8(await this.bytes(field.start, field.end - field.start));
  }

  /** A length-delimited field's payload. */
  async payload(field: WireField): Promise<Uint8Array> {
    return this.bytes(field.start, field.end - field.start);
  }

  async #varint(offset: number, end: number): Promise<{ value: bigint; next: number }> {
    const bytes = await this.bytes(offset, Math.min(10, end - offset));
    let value = 0n;
    for (let i = 0; i < bytes.length; i++) {
      const byte = bytes[i]!;
      value |= BigInt(byte & 0x7f) << BigInt(7 * i);
      if ((byte & 0x80) === 0) return { value, next: offset + i + 1 };
    }
    throw bytes.length < 10 ? this.truncated(offset) : this.corrupt(offset, 'a varint longer than 10 bytes');
  }

  truncated(offset: number): OnnxFormatError {
    return new OnnxFormatError(`${this.fileName} ends in the middle of a field (byte ${offset} of ${this.size}): the file is truncated or not an ONNX model.`,
      'Download the .onnx file again (an interrupted download or a Git LFS pointer file looks like this), or export the model again.');
  }

  corrupt(offset: number, what: string): OnnxFormatError {
    return new OnnxFormatError(`${this.fileName} is not an ONNX model: byte ${offset} holds ${what}, which no ONNX protobuf contains.`,
      'Check that the path names the .onnx graph (not its external data file or another format), or export the model again.');
  }
}
