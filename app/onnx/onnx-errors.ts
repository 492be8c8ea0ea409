import { KvscopeError } from '../errors.js';

/** A file that is not (or not entirely) an ONNX model: what, where, and the fix. */
export class OnnxFormatError extends KvscopeError {
  override readonly name = 'OnnxFormatError';
  constructor(message: string, readonly fix: string) {
    super(message);
  }
}
