import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ENTRY = fileURLToPath(new URL('./kvscope.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'kvscope-early-signals-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/**
 * A module loader hook (node:module register) that holds the load of the CLI's first heavy module,
 * run-cli.ts, for 20 s after saying so on fd 2: the signal then lands exactly while the rest of
 * kvscope loads. Before the fix the entry imported run-cli statically, so the whole graph loaded
 * before early-signals.ts ran and such a signal ended the process without a word.
 */
function holdHeavyLoad(): string {
  const hooks = join(root, 'hold-hooks.mjs');
  writeFileSync(hooks, [
    "import { writeSync } from 'node:fs';",
    'export async function load(url, context, next) {',
    "  if (/\\/main\\/cli\\/run-cli\\.[tj]s$/.test(url)) {",
    "    writeSync(2, 'HOLDING run-cli\\n');",
    '    await new Promise((resolve) => setTimeout(resolve, 20_000));',
    '  }',
    '  return next(url, context);',
    '}',
  ].join('\n'));
  const register = join(root, 'hold-register.mjs');
  writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
  return register;
}

describe('a signal while the CLI is still loading its modules (issue 24 point 3)', () => {
  const register = holdHeavyLoad();
  for (const [signal, status] of [['SIGTERM', 143], ['SIGINT', 130]] as const) {
    it(`${signal} during the load of run-cli: the clear line and ${status}, not a silent death`, async () => {
      const child = spawn(process.execPath, ['--import', 'tsx', '--import', register, ENTRY, 'preflight', '--config', 'synthetic'], {
        cwd: ROOT, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
        if (chunk.includes('HOLDING run-cli')) child.kill(signal);
      });
      const outcome = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
        child.once('close', (code, ended) => resolve({ code, signal: ended }));
      });
      expect(stderr).toContain('HOLDING run-cli');
      expect(outcome, stderr).toEqual({ code: status, signal: null });
      expect(stderr).toContain(`kvscope: ${signal}: stopping now; no file is left half-written`);
    }, 40_000);
  }
});
