import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseRunRecord } from '../app/record/parse-run-record.js';
import type { RunRecord } from '../app/record/run-record.js';
import { STORIES_DIR } from './environment.js';
import { expect, test } from './fixtures.js';
import { ExtensionsFields } from './pages/extensions-fields.js';
import type { Workbench } from './pages/workbench.js';

/**
 * Runtime KV formats chosen in the run panel (issue 27, a kvscope extension), K and V apart: the run
 * names them in its result, its saved record and History, with the path that ran. stories260k's
 * head_dim 8 is refused by llama.cpp's blocks of 32; vLLM's FP8 takes it, and the graph decodes it
 * (the graph path); ONNX Runtime WebGPU's q8 takes it too but runs on the host, which the run says.
 */
/** Runs with the panel's settings, checks the result's format and path, and returns the saved record. */
async function runAndRead(workbench: Workbench, format: string, path: 'graph' | 'host'): Promise<RunRecord> {
  await workbench.run.run();
  expect(await workbench.live.waitForEnd()).toBe('Done');
  await expect(workbench.page.getByTestId('result-format')).toContainText(format);
  await expect(workbench.page.getByTestId('result-path')).toHaveAttribute('data-path', path);
  const id = (await workbench.live.savedRunId.textContent())!;
  const record = parseRunRecord(readFileSync(join(workbench.dataDir!, 'runs', `${id}.json`), 'utf8'), `${id}.json`);
  expect(record.dequantize).toBe(path);
  return record;
}

test.describe('runtime KV formats from the run panel', () => {
  test('K vllm:fp8_e4m3 and V vllm:fp8_e5m2 run in the graph; ort-webgpu:q8 on the host; result, record and History name the format and the path', async ({ openWorkbench }) => {
    const workbench = await openWorkbench();
    const { model, run, page } = workbench;
    await model.openFolder(STORIES_DIR);
    await expect(model.name).toHaveText('stories260k');
    await run.setMaxNewTokens(24);
    await run.setReference(false);
    const extensions = new ExtensionsFields(page);
    await extensions.open();

    // llama.cpp refuses head_dim 8 before Run, with its own words
    await extensions.setFormat('key', 'llama.cpp:q8_0');
    await expect(run.refusal).toContainText('K cache type q8_0 with block size 32 does not divide n_embd_head_k=8');
    await expect(run.runButton).toBeDisabled();

    await extensions.setFormat('key', 'vllm:fp8_e4m3');
    await extensions.setFormat('value', 'vllm:fp8_e5m2');
    await expect(extensions.active).toContainText('runtime KV format (write-once)');
    await expect(run.runButton).toBeEnabled();
    const fp8 = await runAndRead(workbench, 'K vllm:fp8_e4m3 · V vllm:fp8_e5m2', 'graph');
    const fp8Id = fp8.id;
    await expect(page.getByTestId('live-extensions')).toContainText('K vllm:fp8_e4m3, V vllm:fp8_e5m2');
    expect(fp8.settings.quantization.extensions).toMatchObject({ kvFormatKey: 'vllm:fp8_e4m3', kvFormatValue: 'vllm:fp8_e5m2' });
    // FP8: one byte per value, K and V, no residual
    expect(fp8.kvBytesTotal.fullPrecisionBytes).toBe(0);
    expect(fp8.kvBytesTotal.valueCount).toBeGreaterThan(0);
    expect(fp8.kvBytesTotal.codeBytes).toBe(fp8.kvBytesTotal.valueCount);
    await workbench.screenshotResults('run-panel-formats-fp8');

    await extensions.setFormat('key', 'ort-webgpu:q8');
    await extensions.setFormat('value', 'ort-webgpu:q8');
    const q8 = await runAndRead(workbench, 'ort-webgpu:q8', 'host');
    const q8Id = q8.id;
    await expect(page.getByTestId('live-path')).toContainText('ort-webgpu:q8');
    expect(q8.settings.quantization.extensions).toMatchObject({ kvFormatKey: 'ort-webgpu:q8', kvFormatValue: 'ort-webgpu:q8' });

    await workbench.history.show();
    await expect(workbench.history.row(fp8Id).getByTestId('history-cache')).toHaveText('K vllm:fp8_e4m3 · V vllm:fp8_e5m2');
    await expect(workbench.history.row(fp8Id).getByTestId('history-path')).toHaveText('graph');
    await expect(workbench.history.row(q8Id).getByTestId('history-cache')).toHaveText('ort-webgpu:q8');
    await expect(workbench.history.row(q8Id).getByTestId('history-path')).toHaveText('host');
    const saved = await workbench.history.open(fp8Id);
    await expect(saved.getByTestId('saved-extensions')).toContainText('K vllm:fp8_e4m3, V vllm:fp8_e5m2');
    await expect(saved.getByTestId('saved-path')).toHaveAttribute('data-path', 'graph');
  });

  test('a layer map mixing FP8 layers (format_key/format_value) and quanto 4-bit layers: the strip names the formats, the graph path runs it, the result names it', async ({ openWorkbench }) => {
    const workbench = await openWorkbench();
    const { model, run, page } = workbench;
    await model.openFolder(STORIES_DIR);
    await expect(model.name).toHaveText('stories260k');
    await run.setCache({ groupSize: 32, residualLength: 16 });
    await run.setMaxNewTokens(24);
    await run.setReference(false);
    const extensions = new ExtensionsFields(page);
    await extensions.open();
    await extensions.root.getByTestId('layer-map-input').setInputFiles({
      name: 'mixed.yaml', mimeType: 'text/yaml',
      buffer: Buffer.from('0: {format_key: vllm:fp8_e4m3, format_value: vllm:fp8_e5m2}\n1: {nbits_key: 4, nbits_value: 4}\n2: {format_key: vllm:fp8_e4m3, format_value: vllm:fp8_e5m2}\n3: {nbits_key: 4, nbits_value: 4}\n4: {nbits_key: 4, nbits_value: 4}\n'),
    });
    await expect(extensions.root.getByTestId('layer-map-summary')).toContainText('5 layers set');
    const cells = page.getByTestId('layer-cell');
    await expect(cells).toHaveCount(5);
    for (const layer of [0, 2]) await expect(cells.nth(layer)).toHaveAttribute('data-format', 'K vllm:fp8_e4m3, V vllm:fp8_e5m2');
    for (const layer of [1, 3, 4]) await expect(cells.nth(layer)).not.toHaveAttribute('data-format', /./);
    await run.setDequantize('graph');
    await expect(run.runButton).toBeEnabled();
    const record = await runAndRead(workbench, 'vllm:fp8_e4m3, vllm:fp8_e5m2 in the layer map\'s layers (the others quanto 4-bit)', 'graph');
    // the FP8 layers never flush, the quanto layers do (residual 16, 24 new tokens)
    await expect(page.getByTestId('result-flushes')).toHaveText('0 1 0 1 1');
    expect(record.settings.quantization.extensions?.layerMap?.[0]).toMatchObject({ formatKey: 'vllm:fp8_e4m3', formatValue: 'vllm:fp8_e5m2' });
    await workbench.history.show();
    await expect(workbench.history.row(record.id).getByTestId('history-cache')).toHaveText('vllm:fp8_e4m3, vllm:fp8_e5m2 in the layer map\'s layers (the others quanto 4-bit)');
    await expect(workbench.history.row(record.id).getByTestId('history-path')).toHaveText('graph');
  });
});

