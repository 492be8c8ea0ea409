import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hasShared } from '../../app/node/golden.js';
import { PROMPT_200_KB } from '../../app/node/test-support/long-prompt.js';
import { storiesDir } from '../../app/node/test-support/stories.js';
import { runCliProcess } from './test-support/spawn-cli.js';

const root = mkdtempSync(join(tmpdir(), 'kvscope-long-prompt-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));


describe.skipIf(!hasShared())('long prompts through the CLI, in its own process (issue 9, failure 2)', () => {
  it('runs with a 20 KB command line: the worker no longer dies with SIGSEGV in ORT\'s telemetry', async () => {
    // The same option twice: the last one wins, so the command line is long but the prompt is short
    // (the segfault came from the length of /proc/self/cmdline, not from the prompt).
    const outcome = await runCliProcess(['run', '--model', storiesDir(), '--cache', 'dynamic', '--prompt', 'x'.repeat(20_000), '--prompt', 'Once upon a time', '--max-new-tokens', '4', '--json']);
    expect(outcome.signal).toBeNull();
    expect(outcome.stderr).toBe('');
    expect(outcome.code).toBe(0);
    expect((JSON.parse(outcome.stdout) as { tokens: number[] }).tokens).toHaveLength(4);
  });

  it('takes a 200 KB prompt from --prompt-file and from standard input, and refuses it from a prefix with advice within the model\'s 512 positions (issue 24)', async () => {
    const file = join(root, 'prompt.txt');
    writeFileSync(file, `${PROMPT_200_KB}\n`);
    for (const outcome of [
      await runCliProcess(['run', '--model', storiesDir(), '--cache', 'dynamic', '--prompt-file', file, '--max-new-tokens', '4']),
      await runCliProcess(['run', '--model', storiesDir(), '--cache', 'dynamic', '--prompt-file', '-', '--max-new-tokens', '4'], { stdin: PROMPT_200_KB }),
    ]) {
      expect(outcome.signal).toBeNull();
      expect(outcome.code).toBe(1);
      // The whole prompt arrived (its length in characters), a prefix was encoded, and the advice fits max_position_embeddings.
      expect(outcome.stderr).toMatch(/^kvscope run: The prompt is more than 508 tokens \(its first \d+ of 200\d{3} characters alone encode to \d+; the rest was not encoded\); the model has max_position_embeddings = 512/);
      expect(outcome.stderr).toMatch(/\n {2}fix: Shorten the prompt to at most 508 tokens, or ask for fewer new tokens, or pass --allow-past-positions/);
      expect(outcome.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it('refuses --max-new-tokens past the model\'s positions before the run, or runs it with --allow-past-positions and says so first (issue 24)', async () => {
    const refused = await runCliProcess(['run', '--model', storiesDir(), '--cache', 'dynamic', '--prompt', 'Once', '--max-new-tokens', '1000000']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^kvscope run: --max-new-tokens 1000000 reaches past the model's max_position_embeddings = 512 with even a 1-token prompt[^]*fix: Ask for at most 511 new tokens/);
    const past = await runCliProcess(['run', '--model', storiesDir(), '--cache', 'dynamic', '--prompt', 'Once upon a time', '--max-new-tokens', '510', '--ignore-eos', '--allow-past-positions', '--json']);
    expect(past.code).toBe(0);
    expect(past.stderr).toMatch(/^kvscope run: --allow-past-positions: the run may go past the model's max_position_embeddings/);
    expect((JSON.parse(past.stdout) as { tokens: number[] }).tokens).toHaveLength(510);
    const near = await runCliProcess(['run', '--model', storiesDir(), '--cache', 'dynamic', '--prompt', 'Once upon a time', '--max-new-tokens', '510']);
    expect(near.code).toBe(1);
    expect(near.stderr).toMatch(/^kvscope run: The prompt is 5 tokens; the model has max_position_embeddings = 512, and with up to 510 new tokens a prompt may take 2\./);
  });

  it('reads a short prompt from standard input as --prompt would give it', async () => {
    const given = await runCliProcess(['run', '--model', storiesDir(), '--cache', 'dynamic', '--prompt', 'Once upon a time', '--max-new-tokens', '4', '--json']);
    const piped = await runCliProcess(['run', '--model', storiesDir(), '--cache', 'dynamic', '--prompt-file', '-', '--max-new-tokens', '4', '--json'], { stdin: 'Once upon a time\n' });
    expect(piped.code).toBe(0);
    expect(JSON.parse(piped.stdout)).toMatchObject({ tokens: (JSON.parse(given.stdout) as { tokens: number[] }).tokens, promptTokens: [1, 403, 407, 261, 378] });
  });
});
