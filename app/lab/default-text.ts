import { SeededRandom } from '../synthetic/seeded-random.js';

/**
 * kvscope's own evaluation text: short stories in plain English, written by this generator (no
 * third-party text), so `kvscope eval` works out of the box on the embedded models and on
 * stories260k (whose 512-token vocabulary was learned from children's stories). The sentences come
 * from a small grammar driven by a seeded PRNG (app/synthetic/seeded-random.ts), so the text is the
 * same, byte for byte, on every machine, and so is the content hash the reference cache is keyed by.
 * Changing anything here changes every cached reference (their key includes the text).
 */
export const DEFAULT_TEXT_NAME = 'kvscope:default';

const NAMES = ['Lily', 'Tom', 'Mia', 'Ben', 'Sue', 'Max', 'Anna', 'Sam', 'Lucy', 'Tim', 'Jack', 'Amy'];
const ANIMALS = ['dog', 'cat', 'bird', 'bunny', 'frog', 'duck', 'bear', 'fish', 'mouse', 'horse'];
const THINGS = ['ball', 'kite', 'box', 'hat', 'cake', 'book', 'boat', 'toy car', 'flower', 'shell', 'apple', 'drum'];
const COLORS = ['red', 'blue', 'green', 'yellow', 'big', 'little', 'shiny', 'soft', 'old', 'new'];
const PLACES = ['the park', 'the garden', 'the beach', 'the woods', 'the farm', 'the river', 'the hill', 'the house', 'the shop', 'the school'];
const FEELINGS = ['happy', 'sad', 'scared', 'tired', 'excited', 'surprised', 'proud', 'angry', 'kind', 'brave'];
const ACTIONS = ['play', 'run', 'jump', 'sing', 'dance', 'swim', 'read', 'draw', 'look for bugs', 'build a tower'];
const FRIENDS = ['mom', 'dad', 'friend', 'sister', 'brother', 'grandma', 'teacher'];

type Pick = <T>(items: readonly T[]) => T;

const OPENINGS: readonly ((p: Pick, who: string) => string)[] = [
  (p, who) => `Once upon a time, there was a ${p(COLORS)} ${p(ANIMALS)} named ${who}.`,
  (p, who) => `One day, ${who} went to ${p(PLACES)} with ${p(['her', 'his'])} ${p(FRIENDS)}.`,
  (p, who) => `${who} was a little ${p(['girl', 'boy'])} who loved to ${p(ACTIONS)}.`,
  (p, who) => `Every morning, ${who} liked to ${p(ACTIONS)} in ${p(PLACES)}.`,
];

const MIDDLES: readonly ((p: Pick, who: string) => string)[] = [
  (p, who) => `${who} saw a ${p(COLORS)} ${p(THINGS)} under a tree.`,
  (p, who) => `"Look at this ${p(THINGS)}!" said ${who}. "It is so ${p(COLORS)}."`,
  (p, who) => `${who} felt ${p(FEELINGS)}, because the ${p(THINGS)} was gone.`,
  (p) => `Then a ${p(ANIMALS)} came and wanted to ${p(ACTIONS)} too.`,
  (p, who) => `${who} asked the ${p(ANIMALS)}, "Do you want to ${p(ACTIONS)} with me?"`,
  (p) => `The ${p(ANIMALS)} said, "Yes, but first we have to find my ${p(THINGS)}."`,
  (p) => `They looked in ${p(PLACES)} and then in ${p(PLACES)}.`,
  (p, who) => `${who}'s ${p(FRIENDS)} said, "Be careful, it is ${p(['late', 'cold', 'dark', 'hot'])} outside."`,
  (p, who) => `It started to rain, so ${who} ran home with the ${p(THINGS)}.`,
  (p, who) => `${who} shared the ${p(THINGS)} with the ${p(ANIMALS)}, and they both smiled.`,
];

const ENDINGS: readonly ((p: Pick, who: string) => string)[] = [
  (p, who) => `At the end of the day, ${who} was ${p(FEELINGS)} and went to sleep.`,
  (p, who) => `From that day on, ${who} and the ${p(ANIMALS)} were best friends.`,
  (p, who) => `${who} learned that it is good to share and to be ${p(FEELINGS)}.`,
  (p) => `They played together until the sun went down, and it was a ${p(['great', 'fun', 'happy', 'good'])} day.`,
];

/** about 5,300 tokens on stories260k and 4,700 on the synthetic models: 10 and 9 windows of 512 */
export const DEFAULT_STORIES = 24;

/** `stories` short stories (about 220 tokens each on stories260k), one paragraph each. */
export function defaultEvalText(stories = DEFAULT_STORIES): string {
  const random = new SeededRandom(20_260_512, 'kvscope-eval-text');
  const pick: Pick = (items) => items[random.nextUint32() % items.length]!;
  const paragraphs: string[] = [];
  for (let s = 0; s < stories; s++) {
    const who = pick(NAMES);
    const sentences = [pick(OPENINGS)(pick, who)];
    const middle = 5 + (random.nextUint32() % 5);
    for (let i = 0; i < middle; i++) sentences.push(pick(MIDDLES)(pick, who));
    sentences.push(pick(ENDINGS)(pick, who));
    paragraphs.push(sentences.join(' '));
  }
  return paragraphs.join('\n') + '\n';
}
