import { join } from 'node:path';
import { ORT_GENAI_TINY_DIR } from './environment.js';
import { expect, test } from './fixtures.js';

/** transformers' verdict on LFM2's layer types (../shared/models/ort-genai-tiny/README.md), verbatim. */
const LFM2_VERDICT = "`QuantizedCache` is only supported for models with only full attention layers. We found the following invalid layer types: {'conv'}";

test.describe('model layouts researchers bring (real engine)', () => {
  test('the shared LFM2 export: the recognized layout, the config it read, and the derived layer strip, flagged before any run', async ({ openWorkbench }) => {
    const workbench = await openWorkbench();
    const { model, run } = workbench;
    await model.openFolder(join(ORT_GENAI_TINY_DIR, 'lfm2-hybrid-stub'));
    await expect(model.name).toHaveText('lfm2-hybrid-stub');
    await expect(model.fact('layout')).toHaveText('ONNX Runtime GenAI folder (genai_config.json, decoder.onnx)');
    await expect(model.fact('config-file')).toHaveText('genai_config.json');
    await expect(model.fact('precision')).toHaveText('fp32 weights · fp32 KV · fp32 logits');
    await expect(model.fact('model-type')).toHaveText('lfm2');
    await expect(model.fact('layers')).toHaveText('4');
    // the strip derived from genai_config.json's layer_types: conv at 0 and 2, refused by transformers, before any run
    expect(await model.layers()).toEqual([
      ['V', 'none', true], ['F', 'quantized', false], ['V', 'none', true], ['F', 'quantized', false],
    ]);
    await expect(model.verdict).toBeVisible();
    await expect(model.verdictQuote).toHaveText(LFM2_VERDICT);
    await expect(run.preflightStatus).toHaveText(/^Refused/);
    await workbench.screenshot('lfm2-layout-flagged');
  });

  test('the model builder\'s Llama: fp16 from its tensor types, its external data counted', async ({ openWorkbench }) => {
    const workbench = await openWorkbench();
    const { model } = workbench;
    await model.openFolder(join(ORT_GENAI_TINY_DIR, 'llama-fp16'));
    await expect(model.fact('precision')).toHaveText('fp16 weights · fp16 KV · fp16 logits');
    await expect(model.fact('graph-size')).toHaveText(/^2\.07 MiB \(with model\.onnx\.data\)$/);
    await expect(model.fact('kv-dtype')).toHaveText('float16');
    await expect(model.error).toHaveCount(0);
  });
});
