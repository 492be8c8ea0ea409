import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { storiesDir } from '../test-support/stories.js';
import { chooseVariant, findModelFolder } from './model-folder.js';

describe('findModelFolder', () => {
  const temp = mkdtempSync(join(tmpdir(), 'kvscope-folder-'));
  afterAll(() => rmSync(temp, { recursive: true, force: true }));

  it('lists the Hugging Face layout\'s graph variants, model.onnx first', () => {
    const folder = findModelFolder(storiesDir());
    expect(folder.variants.map((v) => [v.file, v.name, v.precision])).toEqual([
      ['onnx/model.onnx', 'model', 'fp32'],
      ['onnx/model_fp16.onnx', 'model_fp16', 'fp16'],
    ]);
    expect(folder.variants[0]!.bytes).toBe(1323969);
    expect(folder.tokenizerPath).toMatch(/tokenizer\.json$/);
    expect(folder.generationConfigPath).toMatch(/generation_config\.json$/);
    expect(chooseVariant(folder).file).toBe('onnx/model.onnx');
    expect(chooseVariant(folder, 'model_fp16.onnx').file).toBe('onnx/model_fp16.onnx');
  });

  it('accepts the path of a graph inside onnx/, and picks that graph', () => {
    const folder = findModelFolder(join(storiesDir(), 'onnx', 'model_fp16.onnx'));
    expect(folder.folder).toBe(storiesDir());
    expect(chooseVariant(folder).file).toBe('onnx/model_fp16.onnx');
  });

  it('finds external data files and quantized variants; asks which graph when there is no model.onnx', () => {
    const dir = join(temp, 'external');
    mkdirSync(join(dir, 'onnx'), { recursive: true });
    writeFileSync(join(dir, 'config.json'), '{}');
    for (const file of ['model_q4.onnx', 'model_q4.onnx_data', 'model_quantized.onnx', 'model_q4f16.onnx', 'model_q4f16.onnx.data']) writeFileSync(join(dir, 'onnx', file), 'xx');
    const folder = findModelFolder(dir);
    expect(folder.variants.map((v) => [v.file, v.precision, v.externalData, v.bytes])).toEqual([
      ['onnx/model_q4.onnx', 'q4', ['onnx/model_q4.onnx_data'], 4],
      ['onnx/model_q4f16.onnx', 'q4f16', ['onnx/model_q4f16.onnx.data'], 4],
      ['onnx/model_quantized.onnx', 'quantized (int8)', [], 2],
    ]);
    expect(() => chooseVariant(folder)).toThrow(/has several graphs and no model\.onnx: onnx\/model_q4\.onnx, onnx\/model_q4f16\.onnx, onnx\/model_quantized\.onnx/);
    expect(() => chooseVariant(folder, 'onnx/model_fp16.onnx')).toThrow(/has no graph "onnx\/model_fp16\.onnx"/);
  });

  it('accepts a single .onnx beside config.json', () => {
    const dir = join(temp, 'single');
    mkdirSync(dir);
    writeFileSync(join(dir, 'config.json'), '{}');
    writeFileSync(join(dir, 'decoder.onnx'), 'x');
    expect(chooseVariant(findModelFolder(dir)).file).toBe('decoder.onnx');
  });

  it('refuses a missing path, a folder without config.json, a folder without graphs', () => {
    expect(() => findModelFolder(join(temp, 'nope'))).toThrow(/does not exist/);
    const noConfig = join(temp, 'no-config');
    mkdirSync(join(noConfig, 'onnx'), { recursive: true });
    writeFileSync(join(noConfig, 'onnx', 'model.onnx'), 'x');
    expect(() => findModelFolder(noConfig)).toThrow(expect.objectContaining({
      name: 'ModelLoadError', fix: expect.stringMatching(/Put the config\.json/), diagnostics: [expect.objectContaining({ code: 'config-missing' })],
    }));
    const noGraph = join(temp, 'no-graph');
    mkdirSync(noGraph);
    writeFileSync(join(noGraph, 'config.json'), '{}');
    expect(() => findModelFolder(noGraph)).toThrow(/has a config\.json but no \.onnx graph/);
  });
});
