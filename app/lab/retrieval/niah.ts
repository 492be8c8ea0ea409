import { SeededRandom } from '../../synthetic/seeded-random.js';
import { FILLER } from './filler.js';
import { depthIndex, fitFiller } from './fit-length.js';
import { checkRequest, type NeedlePlacement, type RetrievalRequest, type RetrievalSample } from './retrieval-task.js';
import { randomKey } from './word-list.js';

/*
 * RULER's needle in a haystack (NVIDIA/RULER scripts/data/synthetic/niah.py with the template and
 * answer prefix of scripts/data/synthetic/constants.py `TASKS['niah']`, prepare.py appending the
 * prefix to the template), on the "repeat" haystack: the filler as lines joined by "\n", the needles
 * inserted between lines. Keys are word pairs, values 7-digit numbers (`type_needle_k words`,
 * `type_needle_v numbers`, RULER's synthetic.yaml for niah_single_1/multikey/multivalue). RULER draws
 * every needle's line at random; here the queried needle sits at the requested depth (the first of
 * them for multi-value), the others at seeded random lines, so the map has a depth axis.
 */
export const NIAH_TEMPLATE =
  'Some special magic {type_needle_v} are hidden within the following text. Make sure to memorize it. I will quiz you about the {type_needle_v} afterwards.\n{context}\nWhat are all the special magic {type_needle_v} for {query} mentioned in the provided text?';
export const NIAH_ANSWER_PREFIX = ' The special magic {type_needle_v} for {query} mentioned in the provided text are';
const NEEDLE = 'One of the special magic {type_needle_v} for {key} is: {value}.';
const TYPE_NEEDLE_V = 'numbers';

export interface NiahShape {
  readonly task: 'niah-single' | 'niah-multikey' | 'niah-multivalue';
  /** num_needle_k: keys in the haystack (one queried, num_needle_q = 1) */
  readonly keys: number;
  /** num_needle_v: values per key */
  readonly valuesPerKey: number;
}

/** RULER's synthetic.yaml: niah_single_1 (1 key, 1 value), niah_multikey_1 (4 keys), niah_multivalue (4 values). */
export const NIAH_SHAPES: Record<NiahShape['task'], NiahShape> = {
  'niah-single': { task: 'niah-single', keys: 1, valuesPerKey: 1 },
  'niah-multikey': { task: 'niah-multikey', keys: 4, valuesPerKey: 1 },
  'niah-multivalue': { task: 'niah-multivalue', keys: 1, valuesPerKey: 4 },
};

/** The template with answer prefix, made singular as niah.py does when one value is asked for. */
export function niahTemplate(valuesAsked: number): { readonly template: string; readonly typeNeedleV: string } {
  let template = NIAH_TEMPLATE + NIAH_ANSWER_PREFIX;
  if (valuesAsked !== 1) return { template, typeNeedleV: TYPE_NEEDLE_V };
  // niah.py: `if args.num_needle_q * args.num_needle_v == 1`, Python's str.replace (every occurrence)
  for (const [from, to] of [['Some', 'A'], ['are all', 'is'], ['are', 'is'], ['answers', 'answer']] as const) {
    template = template.replaceAll(from, to);
  }
  return { template, typeNeedleV: TYPE_NEEDLE_V.slice(0, -1) };
}

export function generateNiah(shape: NiahShape, request: RetrievalRequest): RetrievalSample {
  checkRequest(request);
  const random = new SeededRandom(request.seed, shape.task);
  const keys: string[] = [];
  const needles: { text: string; key: number; value: string }[] = [];
  while (keys.length < shape.keys) {
    const key = randomKey(random);
    if (keys.includes(key)) continue;
    keys.push(key);
    for (let v = 0; v < shape.valuesPerKey; v++) {
      // generate_random_number(7): randint(10**6, 10**7 - 1)
      const value = String(1_000_000 + random.nextInt(9_000_000));
      needles.push({ text: fill(NEEDLE, { type_needle_v: TYPE_NEEDLE_V, key, value }), key: keys.length - 1, value });
    }
  }
  const queried = random.nextInt(shape.keys);
  const answers = needles.filter((needle) => needle.key === queried).map((needle) => needle.value);
  const firstQueried = needles.findIndex((needle) => needle.key === queried);
  // Depths of the other needles as fractions, drawn once so every filler length places them alike.
  const fractions = needles.map(() => random.nextUnit());
  const { template, typeNeedleV } = niahTemplate(answers.length);

  const build = (lines: number) => {
    const placed = needles.map((needle, i) => ({
      ...needle,
      queried: needle.key === queried,
      atDepth: i === firstQueried,
      line: i === firstQueried ? depthIndex(lines, request.depthPercent) : Math.floor(fractions[i]! * (lines + 1)),
    }));
    // niah.py inserts from the last index back so earlier indices stay valid; a stable sort by line
    // puts needles sharing a line in their generated order.
    const ordered = [...placed].sort((a, b) => a.line - b.line);
    const parts: string[] = [];
    let next = 0;
    for (const needle of ordered) {
      for (; next < needle.line; next++) parts.push(FILLER);
      parts.push(needle.text);
    }
    for (; next < lines; next++) parts.push(FILLER);
    const context = parts.join('\n');
    const prompt = fill(template, { type_needle_v: typeNeedleV, context, query: keys[queried]! });
    const contextStart = prompt.indexOf(context);
    const placements: NeedlePlacement[] = [];
    let offset = contextStart;
    for (const part of parts) {
      const needle = ordered.find((candidate) => candidate.text === part);
      if (needle !== undefined) placements.push({ text: part, offset, queried: needle.queried, atDepth: needle.atDepth });
      offset += part.length + 1;
    }
    return { prompt, placements };
  };
  const fit = fitFiller(build, request.countTokens, request.targetTokens, {
    minUnits: 0, maxUnits: request.targetTokens + 8, unitName: 'haystack lines', task: shape.task,
  });
  return {
    task: shape.task,
    seed: request.seed,
    prompt: fit.sample.prompt,
    answers,
    needles: fit.sample.placements,
    depthPercent: request.depthPercent,
    promptTokens: fit.promptTokens,
    fillerUnits: fit.units,
  };
}

/** Python's `str.format` for the named fields these templates use; one pass, so braces inside a value are left alone. */
export function fill(template: string, fields: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in fields ? String(fields[name]) : whole));
}
