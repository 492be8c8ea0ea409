import { UsageError, type CliIo } from '../../app/cli/io.js';
import type { RawOptions } from '../../app/cli/options.js';
import { formatBytes } from '../../app/cli/byte-size.js';
import { FILE_RULES } from '../../app/node/files/file-kinds.js';

/** A readable stream of bytes: the process's standard input, or a test's stand-in. */
export type ByteSource = AsyncIterable<Uint8Array | string>;

/**
 * `--prompt-file FILE` (`-`: standard input) in place of `--prompt TEXT`, so that a long prompt never
 * travels on the command line (where it is visible to every user in `ps`, and limited to 128 KiB per
 * argument on Linux). The file's UTF-8 text is the prompt, less one final newline (as llama.cpp's
 * `--file`: editors and `echo` end files with one). The file goes through the guarded reader (a FIFO
 * or device refused at once, 64 MiB at most); standard input is read to its end with the same cap.
 * Returns the options with `prompt` set, for `runRunCommand`.
 */
export async function resolvePromptFile(options: RawOptions, io: CliIo, stdin: () => ByteSource): Promise<RawOptions> {
  const file = options['prompt-file'];
  if (file === undefined) return options;
  if (typeof file !== 'string' || file === '') throw new UsageError('--prompt-file needs a file name, or - for standard input.');
  if (options['prompt'] !== undefined) throw new UsageError('--prompt and --prompt-file both give the prompt; pass one of them.');
  const bytes = file === '-' ? await readAll(stdin(), FILE_RULES.prompt.maxBytes!) : io.readFile(file, 'prompt');
  const { 'prompt-file': _dropped, ...rest } = options;
  return { ...rest, prompt: withoutFinalNewline(decodeUtf8(bytes, file === '-' ? 'standard input' : file)) };
}

async function readAll(source: ByteSource, maxBytes: number): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of source) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    total += bytes.length;
    if (total > maxBytes) {
      throw new UsageError(`the prompt on standard input is more than ${formatBytes(maxBytes)}, the most kvscope reads for ${FILE_RULES.prompt.label}. ${FILE_RULES.prompt.fix}`);
    }
    chunks.push(bytes);
  }
  return Buffer.concat(chunks, total);
}

function decodeUtf8(bytes: Uint8Array, source: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new UsageError(`${source} is not UTF-8 text, so it cannot be a prompt. Save it as UTF-8 (e.g. iconv -t UTF-8).`);
  }
}

function withoutFinalNewline(text: string): string {
  if (text.endsWith('\r\n')) return text.slice(0, -2);
  if (text.endsWith('\n')) return text.slice(0, -1);
  return text;
}
