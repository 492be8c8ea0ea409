import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { copyOfStories, storiesDir } from '../test-support/stories.js';
import { inspectModel } from './inspect-model.js';

describe('inspectModel', () => {
  const copy = copyOfStories();
  afterAll(() => copy.remove());

  it('reports a sound model with its variants and I/O', async () => {
    const inspection = await inspectModel(storiesDir(), 'onnx/model_fp16.onnx');
    expect(inspection.ok).toBe(true);
    expect(inspection.diagnostics).toEqual([]);
    expect(inspection.variants).toHaveLength(2);
    expect(inspection.io).toMatchObject({ kvDtype: 'float16', logitsType: 'float16' });
    expect(inspection.io!.kvLayers).toHaveLength(5);
  });

  it('collects every problem instead of throwing', async () => {
    writeFileSync(join(copy.dir, 'config.json'), readFileSync(join(storiesDir(), 'config.json'), 'utf8').replace('"head_dim": 8', '"head_dim": 16'));
    writeFileSync(join(copy.dir, 'tokenizer.json'), '{ not json');
    const inspection = await inspectModel(copy.dir);
    expect(inspection.ok).toBe(false);
    expect(inspection.diagnostics.map((d) => d.code).sort()).toEqual(['io-head-dim', 'tokenizer-invalid']);
    expect(inspection.diagnostics.find((d) => d.code === 'tokenizer-invalid')!.message).toMatch(/tokenizer\.json is not valid JSON/);
  });

  it('reports a missing folder as a diagnostic', async () => {
    const inspection = await inspectModel(join(copy.dir, 'missing'));
    expect(inspection).toMatchObject({ ok: false, folder: null, diagnostics: [expect.objectContaining({ code: 'model-folder-missing' })] });
  });
});
