import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ExitCode, UsageError, type CliIo } from '../../app/cli/io.js';
import { KvscopeError, QuantizationError } from '../../app/errors.js';
import { runQuantize } from '../../app/cli/quantize-command.js';
import { runQuantizeFormat } from '../../app/cli/quantize-format-command.js';
import { runPreflightCommand } from '../../app/cli/preflight-command.js';
import { runRunCommand } from '../../app/cli/run-command.js';
import { runEvalCommand } from '../../app/cli/eval-command.js';
import { RETRIEVAL_OPTION_SPECS, runRetrievalCommand } from '../../app/cli/retrieval-command.js';
import { runSweepCommand } from '../../app/cli/sweep-command.js';
import { runCacheCommand } from '../../app/cli/cache-command.js';
import type { EvalOptionTable } from '../../app/lab/sweep-spec.js';
import { CACHE_OPTION_SPECS, EVAL_OPTION_SPECS } from '../../app/cli/option-specs.js';
import { HELP_TEXT, COMMAND_HELP } from './help.js';
import { nodeRunRuntime } from './node-run-runtime.js';
import { nodeEvalRuntime, nodeSweepRuntime } from './node-lab-runtime.js';
import { nodeSweepIo } from './node-sweep-io.js';
import { nodeCacheRuntime } from './node-cache-runtime.js';
import { nodeRetrievalRuntime } from './node-retrieval-runtime.js';
import { resolvePromptFile } from './prompt-file.js';
import { KVSCOPE_VERSION } from '../../app/version.js';
import { useHqqHelperThread } from '../../app/node/hqq-helper-thread.js';

type OptionSpecs = NonNullable<ParseArgsConfig['options']>;

/**
 * The CLI's worker threads are never terminated after a cancel: one whose onnxruntime session.run is
 * in flight would abort the process natively (Napi::Error) and lose the run's record, and a step that
 * takes long (a long prefill on a big model) is no hang. The cancel ends the run at its next step;
 * SIGKILL (or `timeout -k`, Slurm's KillWait) remains the hard stop. A sweep's job processes (--jobs 2
 * or more) are the exception, killed past the deadline: app/node/lab/sweep-job-worker.ts says why.
 */
const CLI_WORKER_OPTIONS = { cancelTimeoutMs: null } as const;

/** The quantized-cache settings, spelled the same by `preflight`, `run` and `eval` (app/cli/option-specs.ts). */
const CACHE_OPTIONS: OptionSpecs = { ...CACHE_OPTION_SPECS };

/** `eval`'s options; `kvscope sweep` takes its spec keys from this table (app/cli/option-specs.ts). */
export const EVAL_OPTIONS: OptionSpecs = { ...EVAL_OPTION_SPECS };

// A command may be asynchronous (`run` waits for its worker thread); the others stay synchronous.
// `positionals`: the command takes arguments besides its flags (`sweep merge DIR…`).
const COMMANDS: Record<string, {
  options: OptionSpecs;
  positionals?: boolean;
  run: (values: Record<string, string | boolean | undefined>, io: CliIo, positionals: readonly string[]) => ExitCode | Promise<ExitCode>;
}> = {
  preflight: {
    options: {
      config: { type: 'string' },
      onnx: { type: 'string' },
      ...CACHE_OPTIONS,
      'seq-len': { type: 'string' },
      batch: { type: 'string' },
      'write-layer-map': { type: 'string' },
      // the lab's targets, as eval takes them: the plan they make is checked and written back
      'quantize-layers': { type: 'string' },
      'quantize-parts': { type: 'string' },
      'pad-prompt-to': { type: 'string' },
      context: { type: 'string' },
      'prompt-tokens': { type: 'string' },
      'kv-dtype': { type: 'string' },
      json: { type: 'boolean' },
    },
    // The model checks read a folder's graph header through app/node (imported on demand, like serve).
    run: async (values, io) => runPreflightCommand(values, io, {
      checkModel: async (path, onnxFile) => (await import('../../app/node/model/check-model.js')).checkModel(path, onnxFile),
    }),
  },
  quantize: {
    options: {
      backend: { type: 'string' },
      nbits: { type: 'string' },
      axis: { type: 'string' },
      'group-size': { type: 'string' },
      input: { type: 'string' },
      dequantized: { type: 'string' },
      codes: { type: 'string' },
      scale: { type: 'string' },
      zero: { type: 'string' },
      format: { type: 'string' },
      blocks: { type: 'string' },
      side: { type: 'string' },
      'calculate-kv-scales': { type: 'boolean' },
      json: { type: 'boolean' },
    },
    run: (values, io) => {
      // A serving runtime's KV format (a kvscope extension, app/cli/quantize-format-command.ts) instead of transformers' backends.
      if (values['format'] !== undefined) return runQuantizeFormat(values, io);
      // Same bits with or without the helper thread; only faster on a second core (app/node/hqq-helper-thread.ts).
      if (values['backend'] === 'hqq') useHqqHelperThread();
      return runQuantize(values, io);
    },
  },
  run: {
    options: {
      model: { type: 'string' },
      onnx: { type: 'string' },
      ep: { type: 'string' },
      cache: { type: 'string' },
      ...CACHE_OPTIONS,
      prompt: { type: 'string' },
      'prompt-ids': { type: 'string' },
      'prompt-file': { type: 'string' },
      'pad-prompt-to': { type: 'string' },
      chat: { type: 'boolean' },
      'max-new-tokens': { type: 'string' },
      'allow-past-positions': { type: 'boolean' },
      greedy: { type: 'boolean' },
      temperature: { type: 'string' },
      'top-k': { type: 'string' },
      'top-p': { type: 'string' },
      seed: { type: 'string' },
      reference: { type: 'boolean' },
      dequantize: { type: 'string' },
      'ignore-eos': { type: 'boolean' },
      out: { type: 'string' },
      json: { type: 'boolean' },
    },
    run: async (values, io) => runRunCommand(await resolvePromptFile(values, io, terminalStdin(io)), io, nodeRunRuntime(VERSION, CLI_WORKER_OPTIONS)),
  },
  eval: {
    // --task: long-context retrieval on generated prompts (app/cli/retrieval-command.ts), not a sweep key yet
    options: { ...EVAL_OPTIONS, ...RETRIEVAL_OPTION_SPECS },
    run: (values, io) => values['task'] !== undefined
      ? runRetrievalCommand(values, io, nodeRetrievalRuntime(VERSION, CLI_WORKER_OPTIONS))
      : runEvalCommand(rejectRetrievalOptions(values), io, nodeEvalRuntime(VERSION, CLI_WORKER_OPTIONS)),
  },
  sweep: {
    // eval's options are the fixed settings of a --preset sweep; --out is the sweep's folder.
    options: {
      ...EVAL_OPTIONS,
      spec: { type: 'string' },
      preset: { type: 'string' },
      jobs: { type: 'string' },
      shard: { type: 'string' },
    },
    positionals: true,
    run: (values, io, positionals) => runSweepCommand(positionals, values, { ...nodeSweepIo(), ...io }, { ...nodeSweepRuntime(VERSION, { ...EVAL_OPTIONS, ...RETRIEVAL_OPTION_SPECS } as EvalOptionTable, CLI_WORKER_OPTIONS), retrieval: nodeRetrievalRuntime(VERSION, CLI_WORKER_OPTIONS) }),
  },
  cache: {
    options: {
      'older-than': { type: 'string' },
      'max-size': { type: 'string' },
      'dry-run': { type: 'boolean' },
      json: { type: 'boolean' },
    },
    positionals: true,
    run: (values, io, positionals) => runCacheCommand(positionals, values, io, nodeCacheRuntime()),
  },
  serve: {
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'data-dir': { type: 'string' },
      'max-runs': { type: 'string' },
    },
    // Imported on demand: the server pulls in onnxruntime-node and ws, which the other commands never need.
    run: async (values, io) => (await import('../serve/serve-command.js')).runServeCommand(values, io),
  },
};

/** Standard input for `--prompt-file -`; on a terminal, say how to end the prompt. */
function terminalStdin(io: CliIo): () => NodeJS.ReadStream {
  return () => {
    if (process.stdin.isTTY === true) io.stderr('kvscope run: reading the prompt from standard input; end it with Ctrl-D.\n');
    return process.stdin;
  };
}

/**
 * Runs one CLI invocation and returns its exit code. Every failure the user can act on becomes one
 * line on stderr without a stack trace; only an unexpected internal error asks for a bug report.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    io.stdout(HELP_TEXT);
    return command === undefined ? ExitCode.badInput : ExitCode.ok;
  }
  if (command === '--version' || command === 'version') {
    io.stdout(`kvscope ${VERSION}\n`);
    return ExitCode.ok;
  }
  const spec = COMMANDS[command];
  if (spec === undefined) {
    io.stderr(`kvscope: unknown command "${command}". Commands: ${Object.keys(COMMANDS).join(', ')}. See kvscope --help.\n`);
    return ExitCode.badInput;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout(COMMAND_HELP[command] ?? HELP_TEXT);
    return ExitCode.ok;
  }
  try {
    const args = joinNegativeNumbers(rest, spec.options);
    const { values, positionals } = parseArgs({ args, options: spec.options, strict: true, allowPositionals: spec.positionals === true });
    return await spec.run(values as Record<string, string | boolean | undefined>, io, positionals);
  } catch (error) {
    return reportError(error, command, io);
  }
}

/**
 * `--axis -1` is how people write it; parseArgs reads `-1` as a flag and refuses it as ambiguous.
 * Join a negative number to the string option before it (`--axis=-1`).
 */
function joinNegativeNumbers(args: readonly string[], options: OptionSpecs): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const next = args[i + 1];
    const name = arg.startsWith('--') ? arg.slice(2) : undefined;
    if (name !== undefined && options[name]?.type === 'string' && next !== undefined && /^-\d+(\.\d+)?$/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else {
      out.push(arg);
    }
  }
  return out;
}

function reportError(error: unknown, command: string, io: CliIo): ExitCode {
  const nodeCode = (error as { code?: unknown } | undefined)?.code;
  if (typeof nodeCode === 'string' && nodeCode.startsWith('ERR_PARSE_ARGS')) {
    io.stderr(`kvscope ${command}: ${(error as Error).message}. See kvscope ${command} --help.\n`);
    return ExitCode.badInput;
  }
  if (error instanceof UsageError || error instanceof QuantizationError || error instanceof KvscopeError) {
    io.stderr(`kvscope ${command}: ${error.message}\n`);
    return ExitCode.badInput;
  }
  const message = error instanceof Error ? error.message : String(error);
  io.stderr(`kvscope ${command}: internal error: ${message}\nThis is a bug in kvscope; please report it with the command you ran. Set KVSCOPE_DEBUG=1 for details.\n`);
  if (process.env['KVSCOPE_DEBUG'] === '1' && error instanceof Error && error.stack) io.stderr(error.stack + '\n');
  return ExitCode.badInput;
}

export const VERSION = KVSCOPE_VERSION;

/** The retrieval options without --task would be ignored by the text evaluation: refused, saying what they need. */
function rejectRetrievalOptions(values: Record<string, string | boolean | undefined>): Record<string, string | boolean | undefined> {
  const given = Object.keys(RETRIEVAL_OPTION_SPECS).find((name) => name !== 'task' && values[name] !== undefined);
  if (given !== undefined) throw new UsageError(`--${given} belongs to a retrieval evaluation; add --task (passkey, niah-single, …) or drop --${given}.`);
  return values;
}
