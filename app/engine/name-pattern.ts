/**
 * A graph I/O name with `%d` where the layer index goes (`past_key_values.%d.key`, `past_%d`,
 * `present_conv.%d`): the notation of onnxruntime-genai's genai_config.json, used for every layout.
 */
export type NamePattern = string;

/** The name of layer `layer`'s tensor. */
export function nameFor(pattern: NamePattern, layer: number): string {
  return pattern.replace('%d', String(layer));
}

/** The layer index a name carries under `pattern`, or null when the name does not fit it. */
export function layerOf(pattern: NamePattern, name: string): number | null {
  const match = patternRegExp(pattern).exec(name);
  return match === null ? null : Number(match[1]);
}

const cache = new Map<string, RegExp>();

function patternRegExp(pattern: NamePattern): RegExp {
  let regExp = cache.get(pattern);
  if (regExp === undefined) {
    const [before = '', ...after] = pattern.split('%d');
    // a pattern without %d names one tensor; it never carries a layer
    regExp = after.length === 0 ? /(?!)/ : new RegExp(`^${escape(before)}(\\d+)${escape(after.join('%d'))}$`);
    cache.set(pattern, regExp);
  }
  return regExp;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
