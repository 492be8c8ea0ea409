/**
 * CSS colours as numbers. The theme's colours come from CSS custom properties, which may be written
 * (or minified by the build: `#ffffff` → `#fff`) in any form CSS allows; charts mix and fade them, so
 * they need channels, not strings. The browser normalizes any colour through a canvas context's
 * `fillStyle` (to `#rrggbb` or `rgba(r, g, b, a)`), and `parseCssColor` reads what it gives back, plus
 * the hex and rgb() forms a stylesheet may hold where no canvas exists (unit tests).
 */
export interface Rgba {
  /** 0–255 */
  readonly r: number;
  readonly g: number;
  readonly b: number;
  /** 0–1 */
  readonly alpha: number;
}

/** Parses `#rgb`, `#rgba`, `#rrggbb`, `#rrggbbaa`, `rgb()`/`rgba()` (comma or space syntax); null otherwise. */
export function parseCssColor(text: string): Rgba | null {
  const value = text.trim().toLowerCase();
  if (value.startsWith('#')) return parseHex(value.slice(1));
  const functional = /^rgba?\(\s*([^)]*)\)$/.exec(value);
  return functional === null ? null : parseRgbArguments(functional[1]!);
}

function parseHex(digits: string): Rgba | null {
  if (!/^[0-9a-f]+$/.test(digits)) return null;
  if (digits.length === 3 || digits.length === 4) {
    const channels = [...digits].map((digit) => Number.parseInt(digit + digit, 16));
    return { r: channels[0]!, g: channels[1]!, b: channels[2]!, alpha: digits.length === 4 ? channels[3]! / 255 : 1 };
  }
  if (digits.length === 6 || digits.length === 8) {
    const channels = [0, 2, 4, 6].slice(0, digits.length / 2).map((offset) => Number.parseInt(digits.slice(offset, offset + 2), 16));
    return { r: channels[0]!, g: channels[1]!, b: channels[2]!, alpha: digits.length === 8 ? channels[3]! / 255 : 1 };
  }
  return null;
}

function parseRgbArguments(body: string): Rgba | null {
  // "r, g, b[, a]" or "r g b[ / a]"
  const [colour, slashAlpha] = body.split('/');
  const parts = colour!.split(/[\s,]+/).filter((part) => part !== '');
  const alphaText = slashAlpha?.trim() ?? parts[3];
  if (parts.length < 3 || parts.length > (slashAlpha === undefined ? 4 : 3)) return null;
  const channels = parts.slice(0, 3).map((part) => channel(part, 255));
  const alpha = alphaText === undefined ? 1 : channel(alphaText, 1);
  if (channels.some((c) => c === null) || alpha === null) return null;
  return { r: Math.round(channels[0]!), g: Math.round(channels[1]!), b: Math.round(channels[2]!), alpha };
}

/** A number or percentage, clamped to [0, scale]; null when not a number. */
function channel(text: string, scale: number): number | null {
  const percent = text.endsWith('%');
  const number = Number(percent ? text.slice(0, -1) : text);
  if (text === '' || !Number.isFinite(number)) return null;
  const value = percent ? (number / 100) * scale : number;
  return Math.min(scale, Math.max(0, value));
}

/** `#rrggbb` when opaque, `rgba(r, g, b, a)` otherwise. */
export function formatCssColor({ r, g, b, alpha }: Rgba): string {
  if (alpha >= 1) return `#${[r, g, b].map((c) => Math.round(c).toString(16).padStart(2, '0')).join('')}`;
  return `rgba(${Math.round(r)}, ${Math.round(g)}, ${Math.round(b)}, ${Number(alpha.toFixed(3))})`;
}

/** The colour a fraction `t` of the way from `from` to `to`, channel by channel (alpha too). */
export function mixColors(from: Rgba, to: Rgba, t: number): Rgba {
  const f = Math.min(1, Math.max(0, t));
  const lerp = (a: number, b: number): number => a + (b - a) * f;
  return { r: Math.round(lerp(from.r, to.r)), g: Math.round(lerp(from.g, to.g)), b: Math.round(lerp(from.b, to.b)), alpha: lerp(from.alpha, to.alpha) };
}

/** Something that normalizes a CSS colour the way the browser does (a canvas context's fillStyle). */
export type ColorNormalizer = (text: string) => string;

/**
 * One colour resolver for every chart: any CSS colour (hex of any length, rgb(), hsl(), named,
 * color-mix() where the browser supports it) in, channels out, or null when the text is no colour.
 * With a normalizer the browser reads the colour first; its output is always parseable.
 */
export function resolveCssColor(text: string, normalize: ColorNormalizer | null): Rgba | null {
  const direct = parseCssColor(text);
  if (direct !== null || normalize === null) return direct;
  return parseCssColor(normalize(text));
}

/**
 * The browser's normalizer: assigning an invalid colour to fillStyle leaves it unchanged, so a
 * sentinel set first tells "not a colour" apart. Null where there is no 2D canvas (jsdom).
 */
export function canvasColorNormalizer(): ColorNormalizer | null {
  if (typeof document === 'undefined') return null;
  let canvas: CanvasRenderingContext2D | null;
  try {
    canvas = document.createElement('canvas').getContext('2d');
  } catch {
    return null;
  }
  if (canvas === null) return null;
  return (text) => {
    canvas.fillStyle = '#010203';
    canvas.fillStyle = text;
    const result = String(canvas.fillStyle);
    return result === '#010203' && text.trim().toLowerCase() !== '#010203' ? '' : result;
  };
}
