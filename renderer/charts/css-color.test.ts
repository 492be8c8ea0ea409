import { describe, expect, it } from 'vitest';
import { formatCssColor, mixColors, parseCssColor, resolveCssColor } from './css-color.js';
import { rampColor } from './heat-scale.js';

describe('parseCssColor', () => {
  it('reads every hex length the same colour, so a minified #fff equals #ffffff', () => {
    expect(parseCssColor('#fff')).toEqual({ r: 255, g: 255, b: 255, alpha: 1 });
    expect(parseCssColor('#ffffff')).toEqual(parseCssColor('#fff'));
    expect(parseCssColor('#1c7ed6')).toEqual({ r: 0x1c, g: 0x7e, b: 0xd6, alpha: 1 });
    expect(parseCssColor('#0f08')!.alpha).toBeCloseTo(0x88 / 255);
    expect(parseCssColor('#1c7ed680')!.alpha).toBeCloseTo(128 / 255);
  });

  it('reads rgb() and rgba() in comma and space syntax, percentages included', () => {
    expect(parseCssColor('rgb(28, 126, 214)')).toEqual({ r: 28, g: 126, b: 214, alpha: 1 });
    expect(parseCssColor('rgba(28, 126, 214, 0.5)')).toEqual({ r: 28, g: 126, b: 214, alpha: 0.5 });
    expect(parseCssColor('rgb(28 126 214 / 50%)')).toEqual({ r: 28, g: 126, b: 214, alpha: 0.5 });
    expect(parseCssColor('rgb(100%, 0%, 50%)')).toEqual({ r: 255, g: 0, b: 128, alpha: 1 });
  });

  it('gives null for what it does not read, never NaN channels', () => {
    for (const text of ['', '#ggg', '#12345', 'rgb(1, 2)', 'rgb(a, b, c)', 'hsl(0 0% 0%)', 'white']) expect(parseCssColor(text)).toBeNull();
  });
});

describe('resolveCssColor', () => {
  it('asks the normalizer only for forms it cannot parse itself', () => {
    const asked: string[] = [];
    const normalize = (text: string): string => {
      asked.push(text);
      return text === 'white' ? '#ffffff' : '';
    };
    expect(resolveCssColor('#abc', normalize)).toEqual({ r: 0xaa, g: 0xbb, b: 0xcc, alpha: 1 });
    expect(resolveCssColor('white', normalize)).toEqual({ r: 255, g: 255, b: 255, alpha: 1 });
    expect(resolveCssColor('nonsense', normalize)).toBeNull();
    expect(asked).toEqual(['white', 'nonsense']);
    expect(resolveCssColor('white', null)).toBeNull();
  });
});

describe('formatting and mixing', () => {
  it('writes opaque colours as #rrggbb and translucent ones as rgba()', () => {
    expect(formatCssColor({ r: 255, g: 0, b: 16, alpha: 1 })).toBe('#ff0010');
    expect(formatCssColor({ r: 255, g: 0, b: 16, alpha: 0.25 })).toBe('rgba(255, 0, 16, 0.25)');
  });

  it('mixes halfway channel by channel', () => {
    expect(formatCssColor(mixColors(parseCssColor('#000')!, parseCssColor('#ffffff')!, 0.5))).toBe('#808080');
  });

  it('fades a run colour into a minified background (the #8e47NaN of the built UI)', () => {
    const faded = rampColor(['#fff', '#1c7ed6'], 0.5);
    expect(faded).toMatch(/^#[0-9a-f]{6}$/);
    expect(faded).toBe(rampColor(['#ffffff', '#1c7ed6'], 0.5));
    expect(rampColor(['rgb(255, 255, 255)', '#1c7ed6'], 0.5)).toBe(faded);
  });

  it('refuses a ramp stop it cannot read instead of drawing NaN', () => {
    expect(() => rampColor(['white', '#1c7ed6'], 0.5)).toThrow(/readChartTheme/);
  });
});
