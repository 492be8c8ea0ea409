import { afterEach, describe, expect, it } from 'vitest';
import type { CliIo } from '../../app/cli/io.js';
import type { RunJson } from '../../app/cli/run-command.js';
import { hasShared } from '../../app/node/golden.js';
import { storiesDir } from '../../app/node/test-support/stories.js';
import { liveGenerationWorkers } from '../../app/node/worker/worker-client.js';
import { nodeCliIo } from './node-io.js';
import { runCli } from './run-cli.js';

function capture(): { io: CliIo; out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return { io: { ...nodeCliIo(), stdout: (t) => void (out += t), stderr: (t) => void (err += t) }, out: () => out, err: () => err };
}

async function cli(args: readonly string[]): Promise<{ code: number; out: string; err: string }> {
  const c = capture();
  const code = await runCli(args, c.io);
  return { code, out: c.out(), err: c.err() };
}

afterEach(async () => {
  for (let waited = 0; liveGenerationWorkers() > 0 && waited < 5_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
  expect(liveGenerationWorkers()).toBe(0);
});

/**
 * The run panel's one-click fix "pad the prompt", from the command line. stories260k has 4 KV heads of
 * head_dim 8: "Once upon a time" is 5 tokens (BOS included), 4·5·8 = 160 values, which quanto's
 * default group of 64 does not divide; padded to 8 tokens it is 256 values, 4 groups.
 */
describe.skipIf(!hasShared())('--pad-prompt-to on stories260k', () => {
  it('kvscope preflight: --seq-len 5 is refused, padded to 8 it passes', async () => {
    const refused = await cli(['preflight', '--config', storiesDir(), '--seq-len', '5', '--json']);
    expect(refused.code).toBe(2);
    expect(refused.out).toContain('Group size (64) must be a divisor of (160)');
    const padded = await cli(['preflight', '--config', storiesDir(), '--seq-len', '5', '--pad-prompt-to', '8', '--json']);
    expect(padded.code).toBe(0);
    expect((JSON.parse(padded.out) as { ok: boolean }).ok).toBe(true);
  });

  it('kvscope run: the default settings refuse the 5-token prompt; padded to 8 it runs, the pad ids first and masked out', async () => {
    const prompt = ['--model', storiesDir(), '--prompt', 'Once upon a time', '--max-new-tokens', '4', '--json'];
    const refused = await cli(['run', ...prompt]);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain('Group size (64) must be a divisor of (160)');

    const padded = await cli(['run', ...prompt, '--pad-prompt-to', '8']);
    expect(padded.err).not.toMatch(/refused|error/i);
    expect(padded.code).toBe(0);
    const json = JSON.parse(padded.out) as RunJson;
    expect(json.promptTokens).toHaveLength(8);
    const dynamic = JSON.parse((await cli(['run', ...prompt, '--cache', 'dynamic'])).out) as RunJson;
    expect(json.promptTokens.slice(3)).toEqual(dynamic.promptTokens);
    expect(new Set(json.promptTokens.slice(0, 3)).size).toBe(1); // one pad id, three times
    expect(json.tokens).toHaveLength(4);
  });
});
