import { KvscopeError } from '../errors.js';

/** The synthetic model could not be built, cached or verified. */
export class SyntheticModelError extends KvscopeError {
  override readonly name = 'SyntheticModelError';
}
