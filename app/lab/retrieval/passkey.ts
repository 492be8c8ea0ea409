import { SeededRandom } from '../../synthetic/seeded-random.js';
import { FILLER } from './filler.js';
import { depthIndex, fitFiller } from './fit-length.js';
import { checkRequest, type RetrievalRequest, type RetrievalSample } from './retrieval-task.js';

/*
 * Passkey retrieval as Mohtashami & Jaggi wrote it (epfml/landmark-attention, llama/run_test.py,
 * `generate_prompt`; LongLoRA's passkey_retrivial.py `generate_prompt_landmark` is the same): the
 * filler repeated and cut to a number of characters, the pass key line between its two parts, the
 * five parts joined by newlines. Two differences, both for the depth × length map: the prefix length
 * is the requested depth of the filler rather than a uniform draw, and the filler length is fitted
 * to a token target (fit-length.ts) rather than given in characters.
 */
export const PASSKEY_TASK_DESCRIPTION =
  'There is an important info hidden inside a lot of irrelevant text. Find it and memorize them. I will quiz you about the important information there.';
export const PASSKEY_QUESTION = 'What is the pass key? The pass key is';

export function passkeyLine(passKey: number): string {
  return `The pass key is ${passKey}. Remember it. ${passKey} is the pass key.`;
}

export function generatePasskey(request: RetrievalRequest): RetrievalSample {
  checkRequest(request);
  // `random.randint(1, 50000)`: inclusive at both ends
  const passKey = 1 + new SeededRandom(request.seed, 'passkey').nextInt(50000);
  const information = passkeyLine(passKey);
  const build = (fillerChars: number) => {
    const prefixChars = depthIndex(fillerChars, request.depthPercent);
    const repeated = repeatFiller(fillerChars);
    // run_test.py cuts both parts from the start of the same `" ".join([garbage] * n)`
    const prefix = repeated.slice(0, prefixChars);
    const suffix = repeated.slice(0, fillerChars - prefixChars);
    const head = `${PASSKEY_TASK_DESCRIPTION}\n${prefix}\n`;
    return { prompt: `${head}${information}\n${suffix}\n${PASSKEY_QUESTION}`, offset: head.length };
  };
  const fit = fitFiller(build, request.countTokens, request.targetTokens, {
    minUnits: 0, maxUnits: request.targetTokens * 32 + 64, unitName: 'filler characters', task: 'passkey',
  });
  return {
    task: 'passkey',
    seed: request.seed,
    prompt: fit.sample.prompt,
    answers: [String(passKey)],
    needles: [{ text: information, offset: fit.sample.offset, queried: true, atDepth: true }],
    depthPercent: request.depthPercent,
    promptTokens: fit.promptTokens,
    fillerUnits: fit.units,
  };
}

function repeatFiller(chars: number): string {
  const copies = Math.ceil((chars + 1) / (FILLER.length + 1));
  return Array.from({ length: copies }, () => FILLER).join(' ');
}
