import { FileAccessError } from '../fs-errors.js';

/** Why the guarded reader refused a file before reading it. */
export type FileRefusal = 'not-regular' | 'link' | 'too-large';

/** A file kvscope will not read (a FIFO, a device, a folder, a foreign link, one past its cap), with what to do. */
export class GuardedFileError extends FileAccessError {
  override readonly name = 'GuardedFileError';

  /** `fix` is kept apart from the message, as every kvscope error does; hosts show both. */
  constructor(message: string, readonly refusal: FileRefusal, readonly fix: string) {
    super(message);
  }
}
