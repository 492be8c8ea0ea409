/**
 * Imported first by the CLI entry (kvscope.ts), before anything slow loads: from then on SIGINT and
 * SIGTERM never kill the process silently. While a command listens (run, eval, sweep, serve install
 * their own handlers) this one stands aside. Before that (modules still loading, flags being read)
 * a signal ends the process with one clear line and the conventional status (128 + the signal's
 * number), having written nothing half: every record kvscope writes is written whole or not at all
 * (app/node/atomic-write.ts). After the command returned, its summary and files are complete: a
 * signal then only hastens the exit, with the command's own status.
 */
const STATUS: Readonly<Record<string, number>> = { SIGINT: 130, SIGTERM: 143 };

let finished = false;

/** The command has returned and set process.exitCode: later signals keep that status. */
export function commandFinished(): void {
  finished = true;
}

function onSignal(signal: NodeJS.Signals): void {
  // a command's own listener is there: it decides (cancel, write the record, then return)
  if (process.listenerCount(signal) > 1) return;
  if (finished) process.exit();
  process.stderr.write(`\nkvscope: ${signal}: stopping now; no file is left half-written (records are written whole or not at all).\n`);
  process.exit(STATUS[signal] ?? 1);
}

process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);
