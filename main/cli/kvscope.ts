#!/usr/bin/env node
// First and alone: signals that arrive while the rest loads end the process with a line (early-signals.ts).
// Everything else is imported dynamically below: a static import would be loaded, with its whole
// graph (about 250 ms of module loading), before this module's body or early-signals' ran, and a
// signal in that time killed the process without a word.
import { commandFinished } from './early-signals.js';

// Headless entry of kvscope: `kvscope preflight`, `kvscope quantize`, `kvscope run` (see --help).
const [{ runCli }, { nodeCliIo }, { disableOrtTelemetry }] = await Promise.all([
  import('./run-cli.js'),
  import('./node-io.js'),
  import('../../app/node/worker/ort-telemetry.js'),
]);
// Before any onnxruntime session (serve opens models on this thread): see ort-telemetry.ts.
disableOrtTelemetry();
process.exitCode = await runCli(process.argv.slice(2), nodeCliIo());
commandFinished();
