#!/usr/bin/env node
// First: signals that arrive while the rest loads end the process with a line (early-signals.ts).
import { commandFinished } from './early-signals.js';
import { runCli } from './run-cli.js';
import { nodeCliIo } from './node-io.js';
import { disableOrtTelemetry } from '../../app/node/worker/ort-telemetry.js';

// Headless entry of kvscope: `kvscope preflight`, `kvscope quantize`, `kvscope run` (see --help).
// Before any onnxruntime session (serve opens models on this thread): see ort-telemetry.ts.
disableOrtTelemetry();
process.exitCode = await runCli(process.argv.slice(2), nodeCliIo());
commandFinished();
