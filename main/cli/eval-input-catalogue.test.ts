import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, useCliSandbox } from './test-support/cli-sandbox.js';
import { hasShared } from '../../app/node/golden.js';
import { storiesDir } from '../../app/node/test-support/stories.js';

/**
 * Eval's inputs as a clumsy user gives them (issue 24 points 4 and 5, issue 23 point 7): each row a
 * command a user could type, ending with the documented exit code and a message that names the input
 * and says what to do: never an internal error, a protocol word, a stack trace or a raw onnxruntime error.
 */
const TINY = join(import.meta.dirname, '../../../shared/models/ort-genai-tiny');
const sandbox = useCliSandbox('eval-catalogue');

function expectUserWords(outcome: { err: string }): void {
  expect(outcome.err).not.toMatch(/\n\s+at /);
  expect(outcome.err).not.toMatch(/internal error|This is a bug|malformed message|lab host|onnxruntime failed|Non-zero status/i);
}

function file(name: string, content: string | Uint8Array): string {
  const path = join(sandbox.dir(), name);
  writeFileSync(path, content);
  return path;
}

describe.skipIf(!hasShared())('eval input catalogue: the text and the window flags', () => {
  it.each([
    [['--context', '-1'], /^kvscope eval: --context must be an integer of at least 3, got -1\.\n$/],
    [['--windows', '-3'], /^kvscope eval: --windows must be an integer of at least 1, got -3\.\n$/],
    [['--stride', '0'], /^kvscope eval: --stride must be an integer of at least 1, got 0\.\n$/],
    [['--context', '2'], /^kvscope eval: --context must be an integer of at least 3, got 2\.\n$/],
  ])('eval %j: the flag and its range, from the CLI parser', async (flags, message) => {
    const outcome = await cli(['eval', '--model', storiesDir(), ...flags]);
    expectUserWords(outcome);
    expect(outcome.code).toBe(1);
    expect(outcome.err).toMatch(message);
  });

  it('a binary file (/bin/ls) as --text is refused before any work, named, with what to do', async () => {
    const outcome = await cli(['eval', '--model', storiesDir(), '--text', '/bin/ls']);
    expectUserWords(outcome);
    expect(outcome.code).toBe(1);
    expect(outcome.err).toMatch(/--text \/bin\/ls looks like a binary file, not a text \(byte \d+ is NUL\)\. Pass a plain UTF-8 text file/);
  });

  it('a text that is not UTF-8 (Latin-1) is refused with the offset and the conversion', async () => {
    const latin1 = file('latin1.txt', Uint8Array.from([...Buffer.from('Caf'), 0xe9, ...Buffer.from(' au lait, une histoire.\n')]));
    const outcome = await cli(['eval', '--model', storiesDir(), '--text', latin1]);
    expectUserWords(outcome);
    expect(outcome.code).toBe(1);
    expect(outcome.err).toContain(`--text ${latin1} is not valid UTF-8 (the first invalid byte is at offset 3). Convert the text to UTF-8 first (e.g. iconv -f latin1 -t utf-8`);
  });

  it('an empty text is told the real minimum (3 tokens), not "at most 1"', async () => {
    const empty = await cli(['eval', '--model', storiesDir(), '--text', file('empty.txt', '')]);
    expectUserWords(empty);
    expect(empty.code).toBe(1);
    expect(empty.err).toMatch(/empty\.txt is empty: there is nothing to evaluate\. .*the smallest window is 3 tokens/);
    // A text of one word encodes to fewer tokens than the smallest window.
    const word = await cli(['eval', '--model', storiesDir(), '--cache', 'dynamic', '--text', file('word.txt', 'a'), '--context', '3', '--prefill', '1']);
    expectUserWords(word);
    expect(word.code).toBe(1);
    expect(word.err).toMatch(/the text encodes to [12] tokens, fewer than one window of --context 3\.\n {2}fix: Use a longer text: the smallest window is --context 3/);
    expect(word.err).not.toMatch(/at most [01]\b/);
  });

  it('--text and --text-ids together, and an ids file that is not ids, are usage errors naming the file', async () => {
    const both = await cli(['eval', '--model', storiesDir(), '--text', file('t.txt', 'hello'), '--text-ids', file('ids.txt', '1 2 3')]);
    expect(both.code).toBe(1);
    expect(both.err).toContain('--text and --text-ids both give the text; pass one');
    const words = file('words-as-ids.txt', '1, 2, three');
    const notIds = await cli(['eval', '--model', storiesDir(), '--text-ids', words]);
    expectUserWords(notIds);
    expect(notIds.code).toBe(1);
    expect(notIds.err).toContain(`--text-ids ${words} is not a list of token ids`);
  });

  it('--text-ids outside the graph\'s vocabulary is refused with the range before any session runs', async () => {
    const ids = file('big-ids.txt', Array.from({ length: 40 }, (_, i) => (i === 7 ? 600 : i + 1)).join(','));
    const outcome = await cli(['eval', '--model', storiesDir(), '--text-ids', ids, '--context', '16']);
    expectUserWords(outcome);
    expect(outcome.code).toBe(1);
    expect(outcome.err).toContain(`--text-ids ${ids} ids 600 are not token ids of this model (its logits have 512 entries).`);
    expect(outcome.err).toContain('from 0 to 511');
  });

  it('a 60 MB text evaluated on one 128-token window tokenizes only what the window needs, in seconds', async () => {
    const sentence = 'Once upon a time, a little girl named Lily found a shiny red ball in the park. ';
    const big = join(sandbox.dir(), 'big.txt');
    writeFileSync(big, sentence.repeat(Math.ceil(60e6 / sentence.length)));
    const out = join(sandbox.dir(), 'big-eval.json');
    const started = performance.now();
    const outcome = await cli(['eval', '--model', storiesDir(), '--text', big, '--windows', '1', '--context', '128', '--json', '--out', out]);
    const seconds = (performance.now() - started) / 1000;
    expect(outcome.err).toBe('');
    expect(outcome.code).toBe(0);
    // Before: the whole text tokenized (over 300 s and 4.6 GB). A generous bound for a loaded 2-core machine.
    expect(seconds).toBeLessThan(60);
    const record = JSON.parse(readFileSync(out, 'utf8')) as { text: { sha256: string; characters: number; tokens: number; tokenizedCharacters?: number; fileBytes?: number } };
    // Only the start was read (64 KiB), and a few kilobytes of it tokenized; the identity is the whole file's.
    expect(record.text.fileBytes).toBe(statSync(big).size);
    expect(record.text.characters).toBe(64 * 1024);
    expect(record.text.tokens).toBe(128);
    expect(record.text.tokenizedCharacters).toBeLessThan(10_000);
    expect(record.text.sha256).toBe(createHash('sha256').update(readFileSync(big)).digest('hex'));
  }, 120_000);
});

describe.skipIf(!hasShared())('eval input catalogue: real layouts (issue 23 point 7)', () => {
  it('gpt2-combined-past\'s tokenizer encodes past the graph\'s cut vocabulary: refused with run\'s message, not onnxruntime\'s', async () => {
    const outcome = await cli(['eval', '--model', join(TINY, 'gpt2-combined-past'), '--windows', '1', '--context', '64']);
    expectUserWords(outcome);
    expect(outcome.code).toBe(1);
    expect(outcome.err).toMatch(/the tokenizer encodes the text to ids the graph does not have \(\d+.*; the graph's logits have 1000 entries\): the tokenizer and the graph do not belong together/);
    expect(outcome.err).toContain('Give the text as token ids from 0 to 999 (kvscope eval --text-ids FILE');
  });

  it('a folder without a tokenizer (the LFM2 genai stub) is evaluated from --text-ids, and told about it without', async () => {
    const folder = join(TINY, 'lfm2-hybrid-stub');
    const without = await cli(['eval', '--model', folder, '--cache', 'dynamic']);
    expectUserWords(without);
    expect(without.code).toBe(1);
    expect(without.err).toContain('kvscope eval --text-ids FILE');
    const ids = file('lfm2-ids.txt', Array.from({ length: 130 }, (_, i) => (i * 37) % 1000).join(' \n'));
    const outcome = await cli(['eval', '--model', folder, '--cache', 'dynamic', '--text-ids', ids, '--context', '64', '--json']);
    expect(outcome.err).toBe('');
    expect(outcome.code).toBe(0);
    const json = JSON.parse(outcome.out) as { windows: number; tokens: number; kld: { max: number }; ppl: number; pplReference: number };
    expect(json.windows).toBe(2);
    expect(json.tokens).toBe(2 * 31);
    expect(json.kld.max).toBe(0);
    expect(json.ppl).toBe(json.pplReference);
  });

  it('a sweep takes "text-ids" at the top of its spec', async () => {
    const ids = file('sweep-ids.txt', Array.from({ length: 70 }, (_, i) => (i * 13) % 1000).join(','));
    const spec = file('sweep.json', JSON.stringify({ model: join(TINY, 'gpt2-combined-past'), 'text-ids': ids, fixed: { context: '64', 'residual-length': '8', 'group-size': '8' }, grid: { nbits: ['2', '4'] } }));
    const out = join(sandbox.dir(), 'sweep-out');
    const outcome = await cli(['sweep', '--spec', spec, '--out', out]);
    expectUserWords(outcome);
    expect(outcome.code, outcome.err).toBe(0);
    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as { rows: { status: string; result: { tokens: number } }[] };
    expect(results.rows.map((row) => row.status)).toEqual(['ok', 'ok']);
    expect(results.rows[0]!.result.tokens).toBe(31);
  });

  it.each([
    ['empty', (path: string): void => truncateSync(path, 0), /model\.onnx\.data is empty, but model\.onnx's weights reach byte \d+ of it/],
    ['truncated', (path: string): void => truncateSync(path, 1_000_000), /model\.onnx\.data is truncated: 1000000 bytes, but model\.onnx's weights reach byte \d+ of it/],
    ['a Git LFS pointer', (path: string): void => writeFileSync(path, 'version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 2130080\n'),
      /model\.onnx\.data is a Git LFS pointer, not the weights\.[\s\S]*git lfs pull/],
  ])('the genai llama export with its external data %s: caught by the preflight and by eval, with what to do', async (_name, damage, message) => {
    const folder = join(sandbox.dir(), `llama-${_name.replace(/\W/g, '-')}`);
    mkdirSync(folder);
    cpSync(join(TINY, 'llama-fp16'), folder, { recursive: true });
    damage(join(folder, 'model.onnx.data'));
    const preflight = await cli(['preflight', '--config', folder]);
    expectUserWords(preflight);
    expect(preflight.code).toBe(1);
    expect(preflight.out + preflight.err).toMatch(message);
    expect(preflight.out + preflight.err).toMatch(/git lfs pull/);
    const evaluated = await cli(['eval', '--model', folder, '--text-ids', file('llama-ids.txt', '1 2 3 4 5 6 7 8'), '--context', '8']);
    expectUserWords(evaluated);
    expect(evaluated.code).toBe(1);
    expect(evaluated.err).toMatch(message);
  });

  it('a graph that is itself a Git LFS pointer is named as one by eval, with `git lfs pull`', async () => {
    const folder = join(sandbox.dir(), 'gpt2-pointer');
    cpSync(join(TINY, 'gpt2-combined-past'), folder, { recursive: true });
    writeFileSync(join(folder, 'past.onnx'), 'version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 578141\n');
    const outcome = await cli(['eval', '--model', folder, '--text-ids', file('pointer-ids.txt', '1 2 3 4 5 6 7 8'), '--context', '8']);
    expectUserWords(outcome);
    expect(outcome.code).toBe(1);
    expect(outcome.err).toMatch(/past\.onnx is a Git LFS pointer, not the model itself\.[\s\S]*git lfs pull/);
  });
});
