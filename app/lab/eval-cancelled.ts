import { KvscopeError } from '../errors.js';

/** An evaluation stopped on request before it finished (Ctrl-C, Stop): nothing of it is recorded. */
export class EvalCancelledError extends KvscopeError {
  override readonly name = 'EvalCancelledError';

  constructor() {
    super('The evaluation was cancelled before it finished; nothing was recorded for it.');
  }
}
