import { decodeEvalText, wholeCharacters } from '../../lab/eval-text-bytes.js';
import type { TextFilePrefix } from '../../lab/eval-settings.js';
import type { MoreText } from '../../lab/text-prefix.js';
import { readGuardedHeadSync } from '../files/guarded-read.js';

/**
 * Reads further into a text file of which the CLI read only the start (EvalText.file): twice the
 * bytes each call, up to its last whole character, checked as the start was; null once all of it
 * has been read. For texts whose tokens are longer than the CLI's bytes-per-token allowance.
 */
export function moreOfTextFile(file: TextFilePrefix): MoreText {
  let requested = file.prefixBytes;
  return () => {
    if (requested >= file.bytes) return null;
    requested = Math.min(file.bytes, 2 * requested);
    const head = readGuardedHeadSync(file.path, 'input', requested);
    return decodeEvalText(requested >= file.bytes ? head : wholeCharacters(head), `--text ${file.path}`);
  };
}
