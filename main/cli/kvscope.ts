#!/usr/bin/env node
import { runCli } from './run-cli.js';
import { nodeCliIo } from './node-io.js';

// Headless entry of kvscope: `kvscope preflight`, `kvscope quantize`, `kvscope run` (see --help).
process.exitCode = await runCli(process.argv.slice(2), nodeCliIo());
