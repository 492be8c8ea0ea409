import { accessSync, constants, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ExitCode, type CliIo } from '../../app/cli/io.js';
import { runQuantize } from '../../app/cli/quantize-command.js';
import { runRunCommand, type RunCommandRuntime } from '../../app/cli/run-command.js';
import { FileAccessError } from '../../app/node/fs-errors.js';
import { sampleResult } from '../../app/protocol/test-support/sample-messages.js';
import { checkOutputPath, OutputPathError } from '../../app/node/files/output-path.js';
import { nodeCliIo } from './node-io.js';

const root = mkdtempSync(join(tmpdir(), 'kvscope-outputs-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A runtime that counts the runs it was asked to start: an output check must come before any. */
function countingRuntime(): RunCommandRuntime & { started: number } {
  const runtime = {
    started: 0,
    stdoutIsTty: false, stderrIsTty: false, kvscopeVersion: '0.0.0-test', now: () => new Date('2026-01-01T00:00:00Z'),
    onInterrupt: () => () => undefined,
    startRun: () => {
      runtime.started++;
      return { id: 1, done: Promise.resolve(sampleResult()), cancel: () => undefined, dispose: () => undefined };
    },
  };
  return runtime;
}

function capturing(io: CliIo = nodeCliIo()): CliIo & { out: string; err: string } {
  const captured = { ...io, out: '', err: '', stdout: (text: string) => void (captured.out += text), stderr: (text: string) => void (captured.err += text) };
  return captured;
}

/** /sys is mounted read-only in most containers; where it is, it stands for a read-only folder (root may write anywhere else). */
const readOnlyFolder = ((): string | null => {
  try {
    accessSync('/sys', constants.W_OK);
    return null;
  } catch {
    return '/sys';
  }
})();

describe('output paths are checked before any work (issue 9, failure 5)', () => {
  it('kvscope run --out onto a folder, or into a missing one, fails before the run starts', async () => {
    const folder = join(root, 'a-folder');
    mkdirSync(folder);
    for (const [out, message] of [
      [folder, /--out .*a-folder is a folder; give a file name, e\.g\. .*a-folder\/run\.json\./],
      [join(root, 'missing', 'run.json'), /--out .*: the folder .*missing does not exist\. Create it first\./],
    ] as const) {
      const runtime = countingRuntime();
      await expect(runRunCommand({ model: 'synthetic', out }, capturing(), runtime)).rejects.toThrow(message);
      expect(runtime.started).toBe(0);
    }
  });

  it.skipIf(readOnlyFolder === null)('kvscope run --out into a read-only folder fails before the run starts', async () => {
    const runtime = countingRuntime();
    await expect(runRunCommand({ model: 'synthetic', out: join(readOnlyFolder!, 'run.json') }, capturing(), runtime))
      .rejects.toThrow(/--out \/sys\/run\.json: cannot write into \/sys \(it is on a read-only file system\)/);
    expect(runtime.started).toBe(0);
  });

  it('a record that still cannot be written (a full disk) leaves the result printed and the exit code 1', async () => {
    const io = capturing({
      ...nodeCliIo(),
      writeFileAtomic: (path) => { throw new FileAccessError(`Cannot write ${path}: the disk is full.`); },
    });
    const code = await runRunCommand({ model: 'synthetic', out: join(root, 'run.json'), json: true }, io, countingRuntime());
    expect(code).toBe(ExitCode.badInput);
    const json = JSON.parse(io.out) as { ok: boolean; tokens: number[]; recordError: string };
    expect(json).toMatchObject({ ok: false, tokens: sampleResult().generatedTokenIds, recordError: expect.stringMatching(/could not be written: Cannot write .*run\.json: the disk is full\./) });
    expect(io.err).toMatch(/the run finished but its record could not be written/);
  });

  it('kvscope quantize checks --dequantized, --codes, --scale and --zero before reading the input', () => {
    const folder = join(root, 'codes-folder');
    mkdirSync(folder, { recursive: true });
    const base = { backend: 'quanto', nbits: '4', axis: '0', 'group-size': '64', input: join(root, 'not-read-yet.npy'), dequantized: join(root, 'deq.npy') };
    expect(() => runQuantize({ ...base, codes: folder }, capturing())).toThrow(/--codes .*codes-folder is a folder/);
    expect(() => runQuantize({ ...base, zero: join(root, 'nope', 'z.npy') }, capturing())).toThrow(/--zero .*: the folder .*nope does not exist/);
    expect(() => runQuantize(base, capturing())).toThrow(/not-read-yet\.npy does not exist/);
  });

  it('checkOutputPath accepts a new file in a writable folder and an existing file', () => {
    expect(() => checkOutputPath(join(root, 'new.json'), '--out')).not.toThrow();
    expect(() => checkOutputPath(join(root, 'a-folder', '..', 'x.csv'), '--out')).not.toThrow();
    expect(() => checkOutputPath(join(root, 'a-folder'), '--out')).toThrow(OutputPathError);
  });
});
