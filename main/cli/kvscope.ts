#!/usr/bin/env node
import { runCli } from './run-cli.js';
import { nodeCliIo } from './node-io.js';
import { disableOrtTelemetry } from '../../app/node/worker/ort-telemetry.js';

// Headless entry of kvscope: `kvscope preflight`, `kvscope quantize`, `kvscope run` (see --help).
// Before any onnxruntime session (serve opens models on this thread): see ort-telemetry.ts.
disableOrtTelemetry();
process.exitCode = await runCli(process.argv.slice(2), nodeCliIo());
