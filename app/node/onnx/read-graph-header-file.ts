import { basename } from 'node:path';
import { readGraphHeader, type GraphHeader } from '../../onnx/graph-header.js';
import { withFileByteSource } from './file-byte-source.js';

/** The header of a `.onnx` file (app/onnx/graph-header.ts), its weights never read. */
export function readGraphHeaderFile(path: string): Promise<GraphHeader> {
  return withFileByteSource(path, (source) => readGraphHeader(source, basename(path)));
}
