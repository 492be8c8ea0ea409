import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sharedDir } from '../golden.js';
import { storiesDir } from '../test-support/stories.js';
import { findModelFolder } from './model-folder.js';
import { readLayoutHeaders, readModelLayout } from './read-model-layout.js';

const choose = (path: string, onnxFile?: string): string => readModelLayout(findModelFolder(path), onnxFile).layout.graph;

describe('findModelFolder', () => {
  const temp = mkdtempSync(join(tmpdir(), 'kvscope-folder-'));
  afterAll(() => rmSync(temp, { recursive: true, force: true }));

  it('lists the Hugging Face layout\'s graph variants, model.onnx first, with the dtype their names say', () => {
    const folder = findModelFolder(storiesDir());
    expect(folder.variants.map((v) => [v.file, v.name, v.dtype])).toEqual([
      ['onnx/model.onnx', 'model', null],
      ['onnx/model_fp16.onnx', 'model_fp16', 'fp16'],
    ]);
    expect(folder.variants[0]!.bytes).toBe(1323969);
    expect(folder.tokenizerPath).toMatch(/tokenizer\.json$/);
    expect(folder.generationConfigPath).toMatch(/generation_config\.json$/);
    expect(folder.genaiConfigPath).toBeNull();
    expect(choose(storiesDir())).toBe('onnx/model.onnx');
    expect(choose(storiesDir(), 'model_fp16.onnx')).toBe('onnx/model_fp16.onnx');
  });

  it('lists a folder of 10,000 graphs in one pass, their data files by name, and names only a few in a message (issue 24)', () => {
    const folder = join(temp, 'ten-thousand');
    mkdirSync(join(folder, 'onnx'), { recursive: true });
    writeFileSync(join(folder, 'config.json'), '{}');
    for (let i = 0; i < 10_000; i++) writeFileSync(join(folder, 'onnx', `e${i}.onnx`), '');
    writeFileSync(join(folder, 'onnx', 'e7.onnx_data'), 'x');
    writeFileSync(join(folder, 'onnx', 'e7.onnx.data_1'), 'xy');
    const started = performance.now();
    const found = findModelFolder(folder);
    // Comparing every graph with every file took over 2 s here; one pass takes a fraction of that.
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(found.variants).toHaveLength(10_000);
    expect(found.variants.find((v) => v.file === 'onnx/e7.onnx')).toMatchObject({ externalData: ['onnx/e7.onnx.data_1', 'onnx/e7.onnx_data'], bytes: 3 });
    expect(found.variants.find((v) => v.file === 'onnx/e70.onnx')!.externalData).toEqual([]);
    let message = '';
    try {
      readModelLayout(found);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/has several graphs and no model\.onnx: (onnx\/e\d+\.onnx, ){9}onnx\/e\d+\.onnx and 9990 more\./);
    expect(message.length).toBeLessThan(1_000);
  });

  it('passes over a loop of links anywhere in the folder (a raw ELOOP once ended the open, issue 24)', () => {
    const folder = join(temp, 'looped');
    mkdirSync(join(folder, 'onnx'), { recursive: true });
    writeFileSync(join(folder, 'config.json'), '{}');
    writeFileSync(join(folder, 'onnx', 'model.onnx'), '');
    symlinkSync('loop', join(folder, 'loop'));
    symlinkSync('self', join(folder, 'onnx', 'self.onnx'));
    const found = findModelFolder(folder);
    expect(found.variants.map((v) => v.file)).toEqual(['onnx/model.onnx']);
  });

  it('an empty graph is named empty, with no advice to download it again; several graphs name --onnx (issue 24)', async () => {
    const folder = join(temp, 'empty-graph');
    mkdirSync(join(folder, 'onnx'), { recursive: true });
    copyFileSync(join(storiesDir(), 'config.json'), join(folder, 'config.json'));
    writeFileSync(join(folder, 'onnx', 'model.onnx'), '');
    const found = findModelFolder(folder);
    const read = readLayoutHeaders(found, readModelLayout(found).layout);
    await expect(read).rejects.toThrow(/^onnx\/model\.onnx is empty \(0 bytes\): it is no ONNX graph\.$/);
    await expect(read).rejects.toMatchObject({ fix: expect.not.stringMatching(/Download/) });
    const several = join(temp, 'several');
    mkdirSync(several);
    copyFileSync(join(storiesDir(), 'config.json'), join(several, 'config.json'));
    writeFileSync(join(several, 'a.onnx'), '');
    writeFileSync(join(several, 'b.onnx'), '');
    expect(() => choose(several)).toThrow(expect.objectContaining({ fix: expect.stringMatching(/--onnx FILE/) }));
  });

  it('accepts the path of a graph inside onnx/, and picks that graph', () => {
    const folder = findModelFolder(join(storiesDir(), 'onnx', 'model_fp16.onnx'));
    expect(folder.folder).toBe(storiesDir());
    expect(readModelLayout(folder).layout.graph).toBe('onnx/model_fp16.onnx');
  });

  it('finds an ONNX Runtime GenAI folder by its genai_config.json, with no config.json', () => {
    const folder = findModelFolder(join(sharedDir(), 'models', 'ort-genai-tiny', 'llama-fp16'));
    expect(folder.configPath).toBeNull();
    expect(folder.genaiConfigPath).toMatch(/genai_config\.json$/);
    expect(folder.variants.map((v) => [v.file, v.externalData])).toEqual([['model.onnx', ['model.onnx.data']]]);
  });

  it('finds external data files and every transformers.js variant suffix; asks which graph when there is no model.onnx', () => {
    const dir = join(temp, 'external');
    mkdirSync(join(dir, 'onnx'), { recursive: true });
    writeFileSync(join(dir, 'config.json'), '{}');
    const files = ['model_q4.onnx', 'model_q4.onnx_data', 'model_q4.onnx_data_1', 'model_quantized.onnx', 'model_q4f16.onnx', 'model_q4f16.onnx.data',
      'model_int8.onnx', 'model_uint8.onnx', 'model_bnb4.onnx', 'model_q2.onnx', 'model_q2f16.onnx', 'model_q1.onnx', 'model_q1f16.onnx'];
    for (const file of files) writeFileSync(join(dir, 'onnx', file), 'xx');
    const folder = findModelFolder(dir);
    expect(folder.variants.map((v) => [v.file, v.dtype, v.externalData, v.bytes])).toEqual([
      ['onnx/model_bnb4.onnx', 'bnb4', [], 2],
      ['onnx/model_int8.onnx', 'int8', [], 2],
      ['onnx/model_q1.onnx', 'q1', [], 2],
      ['onnx/model_q1f16.onnx', 'q1f16', [], 2],
      ['onnx/model_q2.onnx', 'q2', [], 2],
      ['onnx/model_q2f16.onnx', 'q2f16', [], 2],
      ['onnx/model_q4.onnx', 'q4', ['onnx/model_q4.onnx_data', 'onnx/model_q4.onnx_data_1'], 6],
      ['onnx/model_q4f16.onnx', 'q4f16', ['onnx/model_q4f16.onnx.data'], 4],
      ['onnx/model_quantized.onnx', 'q8', [], 2],
      ['onnx/model_uint8.onnx', 'uint8', [], 2],
    ]);
    expect(() => choose(dir)).toThrow(/has several graphs and no model\.onnx: onnx\/model_bnb4\.onnx, /);
    expect(() => choose(dir, 'onnx/model_fp16.onnx')).toThrow(/has no graph "onnx\/model_fp16\.onnx"/);
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ model_type: 'llama', num_hidden_layers: 1, num_attention_heads: 1, head_dim: 8, 'transformers.js_config': { dtype: 'q4f16' } }));
    expect(choose(dir)).toBe('onnx/model_q4f16.onnx');
  });

  it('accepts a single .onnx beside config.json', () => {
    const dir = join(temp, 'single');
    mkdirSync(dir);
    writeFileSync(join(dir, 'config.json'), '{"num_hidden_layers": 1, "num_attention_heads": 1, "head_dim": 8}');
    writeFileSync(join(dir, 'decoder.onnx'), 'x');
    expect(choose(dir)).toBe('decoder.onnx');
  });

  it('refuses a missing path, a folder without any config, a folder without graphs', () => {
    expect(() => findModelFolder(join(temp, 'nope'))).toThrow(/does not exist/);
    const noConfig = join(temp, 'no-config');
    mkdirSync(join(noConfig, 'onnx'), { recursive: true });
    writeFileSync(join(noConfig, 'onnx', 'model.onnx'), 'x');
    expect(() => findModelFolder(noConfig)).toThrow(expect.objectContaining({
      name: 'ModelLoadError', message: expect.stringMatching(/has neither config\.json nor genai_config\.json/),
      fix: expect.stringMatching(/Put the config\.json/), diagnostics: [expect.objectContaining({ code: 'config-missing' })],
    }));
    const noGraph = join(temp, 'no-graph');
    mkdirSync(noGraph);
    writeFileSync(join(noGraph, 'config.json'), '{}');
    expect(() => findModelFolder(noGraph)).toThrow(/has a config\.json but no \.onnx graph/);
  });
});
