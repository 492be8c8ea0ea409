import { KvscopeError } from '../errors.js';

/**
 * A setting or input of `eval` or `sweep` that cannot work (a text too short for one window, a
 * prefill that leaves nothing to score, a malformed sweep spec). The protocol classifies it as
 * invalid input by its name (app/protocol/run-error.ts).
 */
export class EvalInputError extends KvscopeError {
  override readonly name = 'EvalInputError';
  readonly fix: string | undefined;

  constructor(message: string, fix?: string) {
    super(message);
    this.fix = fix;
  }
}
