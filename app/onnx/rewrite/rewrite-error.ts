import { KvscopeError } from '../../errors.js';

/** A graph a rewrite cannot transform as asked: what is wrong, and the fix. */
export class GraphRewriteError extends KvscopeError {
  override readonly name = 'GraphRewriteError';
  constructor(message: string, readonly fix: string) {
    super(message);
  }
}
