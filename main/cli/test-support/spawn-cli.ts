import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The CLI entry from source, run as a user runs it: its own process, its own argv, stdin and signals. */
const ENTRY = fileURLToPath(new URL('../kvscope.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export interface CliOutcome {
  /** the exit code, or null when a signal ended the process */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface SpawnedCli {
  readonly child: ChildProcess;
  /** what the process printed so far */
  output(): { stdout: string; stderr: string };
  readonly done: Promise<CliOutcome>;
}

/** `kvscope <args>` in a child process (tsx); `stdin` is written and closed when given. */
export function spawnCli(args: readonly string[], options: { stdin?: string | Buffer; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): SpawnedCli {
  const child = spawn(process.execPath, ['--import', 'tsx', ENTRY, ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1', ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => void (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => void (stderr += chunk));
  child.stdin!.on('error', () => undefined); // a child that exits before reading its input
  if (options.stdin !== undefined) child.stdin!.end(options.stdin);
  else child.stdin!.end();
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
  const done = new Promise<CliOutcome>((resolve) => {
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return { child, output: () => ({ stdout, stderr }), done };
}

export function runCliProcess(args: readonly string[], options?: Parameters<typeof spawnCli>[1]): Promise<CliOutcome> {
  return spawnCli(args, options).done;
}
