import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CliIo } from '../../app/cli/io.js';
import { hasShared } from '../../app/node/golden.js';
import { buildBadModelFolders, mkfifo, type BadModelFolder } from '../../app/node/test-support/bad-model-folders.js';
import { storiesDir } from '../../app/node/test-support/stories.js';
import { serializeNpy } from '../../app/npy/npy.js';
import { nodeCliIo } from './node-io.js';
import { runCli } from './run-cli.js';

/**
 * The bad-input catalogue of issue 9 for the CLI: every failure of the "Why" and the probe's
 * passing rows, each a command a user could type. Every row must end (no hang), with the documented
 * exit code, one message that names the file and says what is wrong, and no stack trace.
 */
const root = mkdtempSync(join(tmpdir(), 'kvscope-catalogue-cli-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const folders: BadModelFolder[] = hasShared() ? buildBadModelFolders(root) : [];

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIo = { ...nodeCliIo(), stdout: (text) => void (out += text), stderr: (text) => void (err += text) };
  const code = await runCli(args, io);
  return { code, out, err };
}

function expectClean(outcome: { err: string }): void {
  expect(outcome.err).not.toMatch(/\n\s+at /);
  expect(outcome.err).not.toMatch(/internal error|This is a bug/);
}

/** Faults survived, for the count the report gives. */
const survived: string[] = [];

/**
 * The faults the preflight does not see, and why: a missing tokenizer is a warning (a run can take
 * prompt ids), and a folder whose only graph is absent or not a regular file is judged on its config
 * alone (the run says "no .onnx graph"). Every other fault is the preflight's to report, as the run's.
 */
const PREFLIGHT_PASSES: ReadonlySet<string> = new Set(['tokenizer.json is missing', 'no .onnx graph', 'model.onnx is a FIFO']);

describe.skipIf(!hasShared())('bad-input catalogue: kvscope preflight and run on broken model folders', () => {
  for (const folder of folders) {
    it(`preflight: ${folder.name}`, async () => {
      const outcome = await cli(['preflight', '--config', folder.path]);
      expectClean(outcome);
      if (folder.message === null || PREFLIGHT_PASSES.has(folder.name)) {
        expect(outcome.code, outcome.out + outcome.err).toBe(0);
      } else {
        // The preflight reads the whole folder as a run would (config, tokenizer, generation config,
        // the graph's header and external data): the same fault, said before any run.
        expect(outcome.code, outcome.out + outcome.err).toBe(1);
        expect(outcome.out + outcome.err).toMatch(folder.message);
      }
      survived.push(`preflight: ${folder.name}`);
    });
    it(`run: ${folder.name}`, async () => {
      const outcome = await cli(['run', '--model', folder.path, '--cache', 'dynamic', '--max-new-tokens', '2', '--prompt', 'Once']);
      expectClean(outcome);
      if (folder.message === null) {
        expect(outcome.code).toBe(0);
      } else {
        expect(outcome.code, outcome.err).not.toBe(0);
        expect(outcome.err).toMatch(folder.message);
      }
      survived.push(`run: ${folder.name}`);
    });
  }
});

describe('bad-input catalogue: kvscope quantize inputs', () => {
  const npy = (name: string, content: Buffer | Uint8Array): string => {
    const path = join(root, name);
    writeFileSync(path, content);
    return path;
  };
  const valid = serializeNpy({ dtype: 'float32', shape: [1, 2, 4, 64], data: new Float32Array(512).map((_, i) => Math.sin(i)) });
  const rows: readonly [string, () => string | null, RegExp][] = [
    ['a FIFO', () => (mkfifo(join(root, 'k.fifo.npy')) ? join(root, 'k.fifo.npy') : null), /is a FIFO \(named pipe\), not a regular file: kvscope reads a NumPy array/],
    ['a link to /dev/zero', () => { symlinkSync('/dev/zero', join(root, 'zero.npy')); return join(root, 'zero.npy'); }, /zero\.npy is a character device/],
    ['a missing file', () => join(root, 'missing.npy'), /missing\.npy does not exist/],
    ['a truncated file', () => npy('cut.npy', Buffer.from(valid).subarray(0, 200)), /cut\.npy/],
    ['not a .npy (bad magic)', () => npy('text.npy', Buffer.from('hello world, not numpy')), /text\.npy/],
    ['int32 values', () => npy('int.npy', serializeNpy({ dtype: 'int32', shape: [1, 1, 2, 64], data: new Int32Array(128) } as never)), /int\.npy holds int32 values/],
    ['a 3-D tensor', () => npy('3d.npy', serializeNpy({ dtype: 'float32', shape: [2, 4, 64], data: new Float32Array(512) })), /has shape \(2, 4, 64\); a KV tensor is 4-D/],
    ['not named .npy', () => npy('k.bin', valid), /is not a \.npy file/],
  ];
  for (const [name, make, message] of rows) {
    it(`quantize --input: ${name}`, async () => {
      const input = make();
      if (input === null) return;
      const outcome = await cli(['quantize', '--backend', 'quanto', '--nbits', '4', '--axis', '0', '--group-size', '64', '--input', input, '--dequantized', join(root, 'deq.npy')]);
      expectClean(outcome);
      expect(outcome.code).toBe(1);
      expect(outcome.err).toMatch(message);
      survived.push(`quantize: ${name}`);
    });
  }
});

describe('bad-input catalogue: flags', () => {
  const rows: readonly [string, string[], number, RegExp][] = [
    ['no command', [], 1, /Usage:/],
    ['an unknown command', ['train'], 1, /unknown command "train"/],
    ['an unknown flag', ['preflight', '--config', 'x', '--color'], 1, /Unknown option '--color'/],
    ['a flag without its value', ['run', '--model'], 1, /--model/],
    ['a number that is not one', ['run', '--model', 'synthetic', '--max-new-tokens', 'many'], 1, /--max-new-tokens must be an integer, got "many"/],
    ['zero new tokens', ['run', '--model', 'synthetic', '--max-new-tokens', '0'], 1, /--max-new-tokens must be at least 1/],
    ['an unknown execution provider', ['run', '--model', 'synthetic', '--ep', 'tpu'], 1, /--ep must be one of cpu, webgpu, cuda, dml, coreml/],
    ['a model path that is not a folder', ['run', '--model', join(root, 'nowhere')], 1, /is neither a folder nor an \.onnx file/],
    ['--out onto a folder', ['run', '--model', 'synthetic', '--out', root], 1, /is a folder; give a file name/],
    ['--prompt and --prompt-file', ['run', '--model', 'synthetic', '--prompt', 'a', '--prompt-file', 'b'], 1, /both give the prompt/],
    ['--prompt-file missing', ['run', '--model', 'synthetic', '--prompt-file', join(root, 'none.txt')], 1, /none\.txt does not exist/],
    ['a backend in the wrong case (transformers refuses it)', ['preflight', '--config', storiesDir(), '--backend', 'HQQ'], 2, /Unknown quantization backend|HQQ/],
    ['a serve port that is not one', ['serve', '--port', 'http'], 1, /--port must be a port number/],
    ['--max-runs 0', ['serve', '--port', '0', '--max-runs', '0'], 1, /--max-runs must be a whole number of runs, 1 or more/],
  ];
  for (const [name, args, code, message] of rows) {
    it(`flags: ${name}`, async () => {
      const outcome = await cli(args);
      expectClean(outcome);
      expect(outcome.code).toBe(code);
      expect(outcome.out + outcome.err).toMatch(message);
      survived.push(`flags: ${name}`);
    });
  }
});

describe('bad-input catalogue: totals', () => {
  it('every row above was survived', () => {
    // Printed for the note: kinds of bad input tried and faults survived (records lost: none are written here).
    console.log(`CLI bad-input catalogue: ${survived.length} rows survived`);
    expect(survived.length).toBeGreaterThan(0);
  });
});
