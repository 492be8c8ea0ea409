#!/usr/bin/env node
import { runCli } from './run-cli.js';
import { nodeCliIo } from './node-io.js';

// Headless entry of kvscope: `kvscope preflight`, `kvscope quantize` (see --help).
process.exitCode = runCli(process.argv.slice(2), nodeCliIo());
