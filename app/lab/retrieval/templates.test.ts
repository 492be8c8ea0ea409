import { describe, expect, it } from 'vitest';
import { FILLER } from './filler.js';
import { retrievalTask } from './registry.js';
import { countWords, occurrences } from './test-support.js';

// The sentences below are typed from the cited sources, not imported from the generators, so a
// change to a template fails here: epfml/landmark-attention llama/run_test.py (passkey) and
// NVIDIA/RULER scripts/data/synthetic/{niah,variable_tracking,common_words_extraction,freq_words_extraction}.py
// with scripts/data/synthetic/constants.py.
const generate = (name: string, seed = 21, targetTokens = 800, depthPercent = 40) =>
  retrievalTask(name).generate({ seed, targetTokens, depthPercent, countTokens: countWords });

describe('retrieval prompt formats', () => {
  it('passkey follows the landmark-attention test', () => {
    const sample = generate('passkey');
    const key = sample.answers[0]!;
    expect(Number(key)).toBeGreaterThanOrEqual(1);
    expect(Number(key)).toBeLessThanOrEqual(50000);
    expect(FILLER).toBe('The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again.');
    const lines = sample.prompt.split('\n');
    expect(lines).toHaveLength(5);
    expect(lines[0]).toBe('There is an important info hidden inside a lot of irrelevant text. Find it and memorize them. I will quiz you about the important information there.');
    expect(lines[2]).toBe(`The pass key is ${key}. Remember it. ${key} is the pass key.`);
    expect(lines[4]).toBe('What is the pass key? The pass key is');
    // both filler parts are cut from the start of " ".join([garbage] * n)
    const repeated = Array.from({ length: 200 }, () => FILLER).join(' ');
    expect(repeated.startsWith(lines[1]!)).toBe(true);
    expect(repeated.startsWith(lines[3]!)).toBe(true);
  });

  it('niah-single asks for one number in the singular template', () => {
    const sample = generate('niah-single');
    const [value] = sample.answers;
    expect(value).toMatch(/^[1-9]\d{6}$/);
    const needle = sample.needles[0]!;
    const key = /^One of the special magic numbers for (\S+) is: (\d{7})\.$/.exec(needle.text)!;
    expect(key[2]).toBe(value);
    expect(sample.prompt.startsWith('A special magic number is hidden within the following text. Make sure to memorize it. I will quiz you about the number afterwards.\n')).toBe(true);
    expect(sample.prompt.endsWith(`\nWhat is the special magic number for ${key[1]} mentioned in the provided text? The special magic number for ${key[1]} mentioned in the provided text is`)).toBe(true);
    const context = sample.prompt.split('\n').slice(1, -1);
    expect(context.filter((line) => line !== FILLER)).toEqual([needle.text]);
    expect(sample.prompt.slice(needle.offset, needle.offset + needle.text.length)).toBe(needle.text);
  });

  it('niah-multikey hides four keys and asks for one', () => {
    const sample = generate('niah-multikey');
    expect(sample.needles).toHaveLength(4);
    const keys = sample.needles.map((needle) => /for (\S+) is:/.exec(needle.text)![1]);
    expect(new Set(keys).size).toBe(4);
    const queried = sample.needles.filter((needle) => needle.queried);
    expect(queried).toHaveLength(1);
    const queriedKey = /for (\S+) is: (\d+)\./.exec(queried[0]!.text)!;
    expect(sample.answers).toEqual([queriedKey[2]]);
    expect(sample.prompt.endsWith(`What is the special magic number for ${queriedKey[1]} mentioned in the provided text? The special magic number for ${queriedKey[1]} mentioned in the provided text is`)).toBe(true);
  });

  it('niah-multivalue hides four values of one key and asks for all, in the plural template', () => {
    const sample = generate('niah-multivalue');
    expect(sample.answers).toHaveLength(4);
    const key = /for (\S+) is:/.exec(sample.needles[0]!.text)![1]!;
    expect(sample.needles.map((needle) => needle.text).sort()).toEqual(sample.answers.map((value) => `One of the special magic numbers for ${key} is: ${value}.`).sort());
    expect(sample.prompt.startsWith('Some special magic numbers are hidden within the following text. Make sure to memorize it. I will quiz you about the numbers afterwards.\n')).toBe(true);
    expect(sample.prompt.endsWith(`\nWhat are all the special magic numbers for ${key} mentioned in the provided text? The special magic numbers for ${key} mentioned in the provided text are`)).toBe(true);
  });

  it('variable-tracking hides one 4-hop chain whose variables are the answer', () => {
    const sample = generate('variable-tracking');
    const value = /VAR [A-Z]{5} = (\d{5})/.exec(sample.prompt)![1]!;
    expect(sample.prompt.startsWith('Memorize and track the chain(s) of variable assignment hidden in the following text.\n\n')).toBe(true);
    expect(sample.prompt.endsWith(`\nQuestion: Find all variables that are assigned the value ${value} in the text above. Answer: According to the chain(s) of variable assignment in the text above, 5 variables are assgined the value ${value}, they are: `)).toBe(true);
    // follow the chain from the value: each hop assigns the previous variable
    const found = [/VAR ([A-Z]{5}) = \d{5}/.exec(sample.prompt)![1]!];
    for (let hop = 0; hop < 4; hop++) {
      found.push(new RegExp(`VAR ([A-Z]{5}) = VAR ${found.at(-1)} `).exec(sample.prompt)![1]!);
    }
    expect(found).toEqual(sample.answers);
    expect(sample.prompt).toContain(`${FILLER}\n ${FILLER}`);
    expect(sample.needles.map((needle) => needle.offset)).toEqual([...sample.needles.map((needle) => needle.offset)].sort((a, b) => a - b));
  });

  it('cwe lists its ten common words six times and the rest once, after one solved example', () => {
    const sample = generate('cwe');
    const header = 'Below is a numbered list of words. In these words, some appear more often than others. Memorize the ones that appear most often.\n';
    const question = '\nQuestion: What are the 10 most common words in the above list? Answer: The top 10 words that appear most often in the list are:';
    expect(occurrences(sample.prompt, header)).toBe(2);
    expect(occurrences(sample.prompt, question)).toBe(2);
    expect(sample.prompt.endsWith(question)).toBe(true);
    const list = sample.prompt.slice(sample.prompt.lastIndexOf(header) + header.length, sample.prompt.length - question.length);
    const entries = list.split(/ (?=\d+\. )/);
    entries.forEach((entry, i) => expect(entry.startsWith(`${i + 1}. `)).toBe(true));
    const counts = new Map<string, number>();
    for (const entry of entries) counts.set(entry.split(' ')[1]!, (counts.get(entry.split(' ')[1]!) ?? 0) + 1);
    expect(sample.answers).toHaveLength(10);
    for (const [word, count] of counts) expect(count).toBe(sample.answers.includes(word) ? 6 : 1);
    expect(counts.size).toBe(sample.fillerUnits);
  });

  it('fwe: the answers are the 2nd to 4th most frequent coded words, "..." the first', () => {
    const sample = generate('fwe', 21, 2000);
    const header = 'Read the following coded text and track the frequency of each coded word. Find the three most frequently appeared coded words. ';
    expect(sample.prompt.startsWith(header)).toBe(true);
    const question = "\nQuestion: Do not provide any explanation. Please ignore the dots '....'. What are the three most frequently appeared words in the above coded text? Answer: According to the coded text above, the three most frequently appeared words are:";
    expect(sample.prompt.endsWith(question)).toBe(true);
    const words = sample.prompt.slice(header.length, -question.length).split(' ');
    const counts = new Map<string, number>();
    for (const word of words) counts.set(word, (counts.get(word) ?? 0) + 1);
    const ranked = [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([word]) => word);
    expect(ranked[0]).toBe('...');
    expect(ranked.slice(1, 4)).toEqual(sample.answers);
    for (const answer of sample.answers) expect(answer).toMatch(/^[a-z]{6}$/);
    // Zipf with α = 2: word k appears ⌊n / (k² ζ(2))⌋ times
    expect(counts.get('...')).toBe(Math.floor(sample.fillerUnits / (Math.PI ** 2 / 6)));
    expect(counts.get(sample.answers[0]!)).toBe(Math.floor(sample.fillerUnits / 4 / (Math.PI ** 2 / 6)));
  });
});

describe('the sequence length RULER sizes some tasks by', () => {
  it('cwe repeats its common words 30 times from a 4,096-token sequence, even when the prompt is shorter', () => {
    const sample = retrievalTask('cwe').generate({ seed: 3, targetTokens: 4000, sequenceTokens: 4096, depthPercent: 0, countTokens: countWords });
    // the task's list, each entry "N. word" followed by a space
    const list = (prompt: string) => `${prompt.slice(prompt.lastIndexOf('most often.\n') + 'most often.\n'.length, prompt.lastIndexOf('\nQuestion'))} `;
    for (const answer of sample.answers) expect(occurrences(list(sample.prompt), ` ${answer} `)).toBe(30);
    const short = retrievalTask('cwe').generate({ seed: 3, targetTokens: 4000, depthPercent: 0, countTokens: countWords });
    for (const answer of short.answers) expect(occurrences(list(short.prompt), ` ${answer} `)).toBe(6);
  });

  it('fwe draws max_seq_length / 50 coded words', () => {
    const distinct = (sequenceTokens?: number) => {
      const sample = retrievalTask('fwe').generate({ seed: 3, targetTokens: 900, ...(sequenceTokens === undefined ? {} : { sequenceTokens }), depthPercent: 0, countTokens: countWords });
      return new Set(sample.prompt.slice(0, sample.prompt.indexOf('\nQuestion')).split(' ').filter((word) => /^[a-z]{6}$/.test(word) || word === '...')).size;
    };
    // 900 / 50 = 18 words at most; 5000 / 50 = 100, of which the Zipf counts leave more than 18 above zero
    expect(distinct()).toBeLessThanOrEqual(18);
    expect(distinct(5000)).toBeGreaterThan(18);
    expect(() => retrievalTask('fwe').generate({ seed: 3, targetTokens: 900, sequenceTokens: 800, depthPercent: 0, countTokens: countWords })).toThrow(/sequence length 800/);
  });
});
