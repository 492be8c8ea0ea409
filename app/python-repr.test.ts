import { describe, expect, it } from 'vitest';
import { pythonListRepr, pythonNumberRepr, pythonSetRepr, pythonStringRepr } from './python-repr.js';

describe('Python repr', () => {
  it('quotes strings as Python does', () => {
    expect(pythonStringRepr('sliding_attention')).toBe("'sliding_attention'");
    expect(pythonStringRepr("it's")).toBe('"it\'s"');
    expect(pythonStringRepr('a\'b"c')).toBe("'a\\'b\"c'");
    expect(pythonStringRepr('back\\slash\n')).toBe("'back\\\\slash\\n'");
  });

  it('prints lists in order and sets sorted, with set() for the empty set', () => {
    expect(pythonListRepr(['text_config', 'decoder'])).toBe("['text_config', 'decoder']");
    expect(pythonSetRepr(['sliding_attention', 'conv', 'sliding_attention'])).toBe("{'conv', 'sliding_attention'}");
    expect(pythonSetRepr([])).toBe('set()');
  });

  it('formats numbers like str(int) and str(float) for the usual values', () => {
    expect(pythonNumberRepr(3)).toBe('3');
    expect(pythonNumberRepr(-1)).toBe('-1');
    expect(pythonNumberRepr(2.5)).toBe('2.5');
    expect(pythonNumberRepr(Infinity)).toBe('inf');
    expect(pythonNumberRepr(NaN)).toBe('nan');
  });
});
