import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS, type QuantizedCacheSettings } from '../../app/cache/cache-config.js';
import type { CliIo } from '../../app/cli/io.js';
import { parseModelConfig } from '../../app/config/parse-model-config.js';
import { configJson, PUBLISHED_CONFIGS } from '../../app/config/test-support/published-configs.js';
import { hasShared } from '../../app/node/golden.js';
import { storiesDir } from '../../app/node/test-support/stories.js';
import { liveGenerationWorkers } from '../../app/node/worker/worker-client.js';
import type { DiagnosticCode } from '../../app/preflight/diagnostic.js';
import { runPreflight, type PreflightOptions } from '../../app/preflight/run-preflight.js';
import { COMMAND_HELP, HELP_TEXT } from './help.js';
import { nodeCliIo } from './node-io.js';
import { runCli } from './run-cli.js';

/**
 * kvscope's messages once cited its own reference documents ("(spec §3.2)"), which the person at the
 * terminal does not have. The citations belong in code comments; these tests scan what reaches a
 * user: the preflight's whole diagnostics catalogue, and what the CLI prints for its refusals.
 */
const CITATION = /§|spec §/;

/**
 * Every diagnostic code the preflight has (a Record over the union: a new code fails to compile
 * until it is listed here, and the test below fails until the grid raises it).
 */
const EVERY_CODE: Readonly<Record<DiagnosticCode, true>> = {
  'unknown-backend': true, 'unsupported-layer-types': true, 'invalid-nbits': true, 'invalid-axis-key': true, 'invalid-axis-value': true,
  'layers-kept-full-precision': true, 'no-quantizable-layers': true, 'layers-without-kv-cache': true, 'invalid-group-size': true,
  'invalid-residual-length': true, 'residual-flushes-every-second-step': true, 'hqq-3bit-axis-1': true, 'hqq-bitpack-group-size': true,
  'group-larger-than-tensor': true, 'quanto-group-size-divisor': true, 'hqq-group-size-divisor': true, 'hqq-bitpack-rows': true,
  'invalid-nbits-key': true, 'invalid-nbits-value': true, 'invalid-layer-map': true, 'invalid-full-precision-layers': true,
  'invalid-sink-tokens': true, 'invalid-rotation': true, 'rotation-block-diagonal': true, 'invalid-outlier-quantile': true,
  'invalid-kv-format': true, 'kv-format-refused': true, 'kvscope-extensions': true, 'axis-recommendation': true, 'sliding-window-covers-context': true, 'config-note': true,
  'invalid-batch': true, 'invalid-sequence-length': true,
};

/** Settings that between them raise every code on the published configs. */
const GRID: readonly (readonly [Partial<QuantizedCacheSettings>, PreflightOptions])[] = [
  [{}, {}],
  [{ layerPolicy: 'full-attention-only' }, {}],
  [{ backend: 'HQQ' }, {}],
  [{ nbits: 3 }, {}],
  [{ axisKey: 1 }, {}],
  [{ axisValue: 2 }, {}],
  [{ groupSize: 0 }, {}],
  [{ residualLength: 1.5 }, {}],
  [{ residualLength: 0 }, {}],
  [{ backend: 'hqq', nbits: 3, axisKey: 1, axisValue: 1 }, {}],
  [{ backend: 'hqq', nbits: 1, groupSize: 4 }, {}],
  [{ backend: 'hqq', nbits: 4, groupSize: 7, axisKey: 1, axisValue: 1 }, { sequenceLengths: [5, 7] }],
  [{ backend: 'hqq', nbits: 1, groupSize: 512, axisKey: 1, axisValue: 1 }, { sequenceLengths: [1, 3] }],
  [{ groupSize: 4096 * 64 }, { sequenceLengths: [1] }],
  [{ axisKey: -1, axisValue: -1 }, { sequenceLengths: [5] }],
  [{}, { sequenceLengths: [5], batch: 0 }],
  [{}, { sequenceLengths: [0] }],
  [{ extensions: { nbitsKey: 3 } }, {}],
  [{ extensions: { nbitsValue: 9, sinkTokens: -1 } }, {}],
  [{ extensions: { rotation: 'hadamard', outlierQuantile: 2 } }, {}],
  [{ extensions: { rotation: 'givens' as 'hadamard' } }, {}],
  [{ extensions: { fullPrecisionFirstLayers: 999 } }, {}],
  [{ extensions: { layerMap: [{ layer: 999, nbitsKey: 4, nbitsValue: 4 }] } }, {}],
  [{ extensions: { nbitsKey: 2, nbitsValue: 4, sinkTokens: 4 } }, {}],
  [{ layerPolicy: 'full-attention-only', residualLength: 1 }, { sequenceLengths: [4096] }],
  [{ extensions: { kvFormatKey: 'llama.cpp:q8_0', kvFormatValue: 'llama.cpp:q9_0' } }, {}],
  [{ extensions: { kvFormatKey: 'mlx:4bit-g128', kvFormatValue: 'llama.cpp:q4_0' } }, {}],
];

describe('the preflight diagnostics catalogue', () => {
  it('raises every code over the published configs, and no message or fix cites an internal document', () => {
    const seen = new Set<string>();
    const citing: string[] = [];
    for (const published of PUBLISHED_CONFIGS) {
      const config = parseModelConfig(configJson(published), `${published.id}/config.json`);
      const texts = [config.layers.rule, ...config.layers.notes, ...config.notes];
      for (const [settings, options] of GRID) {
        for (const d of runPreflight(config, { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, ...settings }, options).diagnostics) {
          seen.add(d.code);
          texts.push(d.message, d.fix ?? '');
          if (CITATION.test(d.message) || CITATION.test(d.fix ?? '')) citing.push(`${published.id} ${d.code}: ${d.message}`);
        }
      }
      citing.push(...texts.filter((text) => CITATION.test(text)).map((text) => `${published.id}: ${text}`));
    }
    expect([...new Set(citing)]).toEqual([]);
    expect(Object.keys(EVERY_CODE).filter((code) => !seen.has(code))).toEqual([]);
  });
});

function capture(): { io: CliIo; text: () => string } {
  let text = '';
  return { io: { ...nodeCliIo(), stdout: (t) => void (text += t), stderr: (t) => void (text += t) }, text: () => text };
}

async function cli(args: readonly string[]): Promise<{ code: number; text: string }> {
  const c = capture();
  const code = await runCli(args, c.io);
  return { code, text: c.text() };
}

/** The CLI spellings of the grid's refusals and findings. */
const PREFLIGHT_FLAGS: readonly (readonly string[])[] = [
  [],
  ['--layer-policy', 'full-attention-only'],
  ['--backend', 'HQQ'],
  ['--nbits', '3'],
  ['--axis-key', '1'],
  ['--group-size', '0'],
  ['--residual-length', '0'],
  ['--backend', 'hqq', '--nbits', '3', '--axis-key', '1', '--axis-value', '1'],
  ['--backend', 'hqq', '--nbits', '1', '--group-size', '4'],
  ['--backend', 'hqq', '--nbits', '4', '--group-size', '7', '--axis-key', '1', '--axis-value', '1', '--seq-len', '5,7'],
  ['--axis-key', '-1', '--axis-value', '-1', '--seq-len', '5'],
  ['--group-size', '262144', '--seq-len', '1'],
  ['--nbits-key', '3', '--sink-tokens', '4', '--rotate', 'hadamard', '--outliers', '0.99'],
  ['--full-precision-first', '999'],
];

/** Configs kvscope refuses to read, each for a reason transformers has too. */
const BAD_CONFIGS: Readonly<Record<string, unknown>> = {
  'exaone4-zero-division': { model_type: 'exaone4', num_hidden_layers: 2, num_attention_heads: 4, hidden_size: 64, sliding_window: null },
  'layer-types-too-short': { model_type: 'llama', num_hidden_layers: 4, num_attention_heads: 4, hidden_size: 64, layer_types: ['full_attention'] },
  'nemotron-bad-pattern': { model_type: 'nemotron_h', num_hidden_layers: 3, num_attention_heads: 4, hidden_size: 64, hybrid_override_pattern: 'M*X' },
  'ambiguous-text-config': { text_config: { num_hidden_layers: 2 }, generator: { num_hidden_layers: 2 } },
};

let dir: string;
beforeAll(() => { dir = mkdtempSync(join(tmpdir(), 'kvscope-no-citations-')); });
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function writeConfig(name: string, config: unknown): string {
  const folder = join(dir, name.replace(/[^A-Za-z0-9._-]/g, '_'));
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'config.json'), JSON.stringify(config, null, 2));
  return folder;
}

describe('what the CLI prints has no internal document references', () => {
  it('help, for every command', async () => {
    expect(HELP_TEXT).not.toMatch(CITATION);
    for (const [command, text] of Object.entries(COMMAND_HELP)) expect(`${command}: ${text}`).not.toMatch(CITATION);
  });

  it('kvscope preflight: the published configs under refused and warned settings, as text and --json', async () => {
    let refused = 0;
    for (const published of PUBLISHED_CONFIGS) {
      const folder = writeConfig(published.id, published.config);
      for (const flags of PREFLIGHT_FLAGS) {
        for (const json of [[], ['--json']]) {
          const { code, text } = await cli(['preflight', '--config', join(folder, 'config.json'), ...flags, ...json]);
          if (code === 2) refused++;
          expect(text, `preflight ${published.id} ${flags.join(' ')} ${json.join('')}`).not.toMatch(CITATION);
        }
      }
    }
    expect(refused).toBeGreaterThan(PUBLISHED_CONFIGS.length); // the refusals were printed, not skipped
  });

  it('kvscope preflight: configs it cannot read', async () => {
    for (const [name, config] of Object.entries(BAD_CONFIGS)) {
      const { code, text } = await cli(['preflight', '--config', writeConfig(name, config)]);
      expect(code, `${name}: ${text}`).toBe(1);
      expect(text, name).toMatch(/^kvscope preflight: /);
      expect(text, name).not.toMatch(CITATION);
    }
  });

  describe.skipIf(!hasShared())('kvscope run on stories260k', () => {
    afterAll(async () => {
      for (let waited = 0; liveGenerationWorkers() > 0 && waited < 5_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
    });

    it.each([
      ['an unknown backend (transformers refuses)', ['--backend', 'HQQ']],
      ['a group size that does not divide the prompt (the backend would fail)', ['--group-size', '7']],
      ['3-bit quanto', ['--nbits', '3']],
      ['HQQ 3-bit on axis 1', ['--backend', 'hqq', '--nbits', '3', '--axis-key', '1', '--axis-value', '1']],
      ['a residual length that flushes every second step', ['--residual-length', '0', '--group-size', '32', '--max-new-tokens', '2']],
    ])('%s', async (_name, flags) => {
      const { text } = await cli(['run', '--model', storiesDir(), '--prompt', 'Once upon a time', '--max-new-tokens', '4', ...flags]);
      expect(text.length).toBeGreaterThan(0);
      expect(text).not.toMatch(CITATION);
    });
  });
});
