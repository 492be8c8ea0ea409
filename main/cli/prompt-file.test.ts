import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { nodeCliIo } from './node-io.js';
import { resolvePromptFile } from './prompt-file.js';

const root = mkdtempSync(join(tmpdir(), 'kvscope-prompt-file-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function* chunks(...parts: (string | Uint8Array)[]): AsyncIterable<string | Uint8Array> {
  for (const part of parts) yield part;
}
const noStdin = () => chunks();

describe('--prompt-file', () => {
  it('reads the prompt from a UTF-8 file, less one final newline', async () => {
    const path = join(root, 'prompt.txt');
    writeFileSync(path, 'Once upon a time, é\n\n');
    expect(await resolvePromptFile({ model: 'm', 'prompt-file': path }, nodeCliIo(), noStdin)).toEqual({ model: 'm', prompt: 'Once upon a time, é\n' });
    writeFileSync(path, 'two lines\r\n');
    expect((await resolvePromptFile({ 'prompt-file': path }, nodeCliIo(), noStdin))['prompt']).toBe('two lines');
    expect(await resolvePromptFile({ prompt: 'as given' }, nodeCliIo(), noStdin)).toEqual({ prompt: 'as given' });
  });

  it('reads standard input to its end for -', async () => {
    const text = 'x'.repeat(200_000);
    const options = await resolvePromptFile({ 'prompt-file': '-' }, nodeCliIo(), () => chunks(text.slice(0, 70_000), Buffer.from(text.slice(70_000)), '\n'));
    expect(options['prompt']).toBe(text);
  });

  it('refuses both flags at once, a non-UTF-8 file, a FIFO and a missing file, with what to do', async () => {
    const path = join(root, 'latin1.txt');
    writeFileSync(path, Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    await expect(resolvePromptFile({ prompt: 'a', 'prompt-file': path }, nodeCliIo(), noStdin)).rejects.toThrow('--prompt and --prompt-file both give the prompt; pass one of them.');
    await expect(resolvePromptFile({ 'prompt-file': path }, nodeCliIo(), noStdin)).rejects.toThrow(/latin1\.txt is not UTF-8 text.*iconv/);
    await expect(resolvePromptFile({ 'prompt-file': join(root, 'nope.txt') }, nodeCliIo(), noStdin)).rejects.toThrow(/nope\.txt does not exist/);
    const fifo = join(root, 'prompt.fifo');
    if (spawnSync('mkfifo', [fifo]).status === 0) {
      const started = performance.now();
      await expect(resolvePromptFile({ 'prompt-file': fifo }, nodeCliIo(), noStdin)).rejects.toThrow(/is a FIFO \(named pipe\), not a regular file/);
      expect(performance.now() - started).toBeLessThan(1000);
    }
  });

  it('caps standard input like a file', async () => {
    async function* endless(): AsyncIterable<Uint8Array> {
      const block = new Uint8Array(1 << 20).fill(0x61);
      for (;;) yield block;
    }
    await expect(resolvePromptFile({ 'prompt-file': '-' }, nodeCliIo(), endless)).rejects.toThrow(/the prompt on standard input is more than 64\.0 MiB/);
  });
});
