// @vitest-environment jsdom
import { cleanup, fireEvent, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseLayerMap } from '../../../app/cache/layer-map.js';
import { renderWorkbench, type RenderedWorkbench } from '../../test-support/render-workbench.js';

vi.mock('../../charts/echarts-core.js', async () => {
  const { recordingChart } = await import('../../test-support/chart-mock.js');
  return { initChart: () => recordingChart() };
});

afterEach(cleanup);

function row(layer: number): HTMLElement {
  return screen.getAllByTestId('layer-row').find((element) => element.dataset['layer'] === String(layer))!;
}

async function pick(view: RenderedWorkbench, layer: number, side: 'key' | 'value', value: string): Promise<void> {
  fireEvent.change(within(row(layer)).getByTestId(`layer-side-${side}`), { target: { value } });
  await view.settle();
}

async function applyRange(view: RenderedWorkbench, range: string, key: string, value: string): Promise<void> {
  fireEvent.change(screen.getByTestId('layer-range-input'), { target: { value: range } });
  fireEvent.change(screen.getByTestId('layer-range-key'), { target: { value: key } });
  fireEvent.change(screen.getByTestId('layer-range-value'), { target: { value } });
  fireEvent.click(screen.getByTestId('layer-range-apply'));
  await view.settle();
}

describe('the run panel\'s per-layer plan editor', () => {
  it('shows one row per layer of the open model, every one the default, and nothing active', async () => {
    const view = await renderWorkbench();
    const numLayers = view.store.getState().model.summary!.config!.geometry.numLayers;
    expect(screen.getAllByTestId('layer-row')).toHaveLength(numLayers);
    expect(screen.getByTestId('layer-map-summary').textContent).toBe('every layer the default');
    expect(screen.queryByTestId('layer-map-badge')).toBeNull();
    expect((within(row(0)).getByTestId('layer-side-key') as HTMLSelectElement).value).toBe('default');
    // quanto's bits only, and the runtime formats
    const options = [...(within(row(0)).getByTestId('layer-side-key') as HTMLSelectElement).options].map((option) => option.value);
    expect(options).toContain('bits:2');
    expect(options).not.toContain('bits:8');
    expect(options).toContain('format:llama.cpp:q8_0');
    expect(view.store.getState().form.quantization.extensions).toBeUndefined();
  });

  it('sets a range to full precision and all layers to K 4 / V 2; the form\'s layer map, the strip and the active list follow', async () => {
    const view = await renderWorkbench();
    await applyRange(view, '0-1', 'full', 'full');
    expect(view.store.getState().form.quantization.extensions?.layerMap).toEqual([{ layer: 0, fullPrecision: true }, { layer: 1, fullPrecision: true }]);
    const cells = screen.getAllByTestId('layer-cell');
    expect(cells.map((cell) => cell.dataset['plan']).slice(0, 3)).toEqual(['full-precision', 'full-precision', 'quantized']);
    expect(screen.getByTestId('extensions-active').textContent).toBe('(per-layer settings)');
    expect(screen.getByTestId('layer-map-summary').textContent).toContain('2 layers set');
    expect(screen.getByTestId('layer-map-badge').textContent).toBe('kvscope extension');

    await applyRange(view, 'all', 'bits:4', 'bits:2');
    const map = view.store.getState().form.quantization.extensions?.layerMap;
    expect(map).toHaveLength(cells.length);
    expect(map!.every((entry) => 'nbitsKey' in entry && entry.nbitsKey === 4 && entry.nbitsValue === 2)).toBe(true);

    fireEvent.click(screen.getByTestId('layer-map-clear'));
    await view.settle();
    expect(view.store.getState().form.quantization.extensions).toBeUndefined();
  });

  it('says which rows the first/last-N shorthand keeps in full precision, whatever the map says, and locks their sides', async () => {
    const view = await renderWorkbench();
    fireEvent.change(screen.getByTestId('fp-first-input'), { target: { value: '2' } });
    fireEvent.blur(screen.getByTestId('fp-first-input'));
    await view.settle();
    expect(view.store.getState().form.quantization.extensions?.fullPrecisionFirstLayers).toBe(2);
    expect(within(row(1)).getByTestId('layer-row-locked').textContent).toBe('full precision: first 2 layers');
    expect((within(row(1)).getByTestId('layer-side-key') as HTMLSelectElement).disabled).toBe(true);
    expect(within(row(2)).queryByTestId('layer-row-locked')).toBeNull();
    expect((within(row(2)).getByTestId('layer-side-key') as HTMLSelectElement).disabled).toBe(false);
  });

  it('locks the rows the layer policy keeps in full precision (full attention only, on a sliding + full model)', async () => {
    const view = await renderWorkbench();
    fireEvent.click(screen.getByTestId('open-synthetic-hybrid'));
    await view.settle();
    const layers = view.store.getState().model.summary!.config!.layers.layers;
    const sliding = layers.findIndex((layer) => layer.actualKind === 'sliding_attention');
    const full = layers.findIndex((layer) => layer.actualKind === 'full_attention');
    expect(sliding).toBeGreaterThanOrEqual(0);
    view.store.getState().updateQuantization({ layerPolicy: 'full-attention-only' });
    await view.settle();
    expect(within(row(sliding)).getByTestId('layer-row-locked').textContent).toBe('full precision: the layer policy quantizes full attention only');
    expect((within(row(sliding)).getByTestId('layer-side-value') as HTMLSelectElement).disabled).toBe(true);
    expect(within(row(full)).queryByTestId('layer-row-locked')).toBeNull();
  });

  it('refuses a range it cannot read, in words, and sets nothing', async () => {
    const view = await renderWorkbench();
    await applyRange(view, '0-99', 'full', 'full');
    expect(screen.getByTestId('layer-range-problem').textContent).toMatch(/^layer 99 does not exist: this model has layers 0–\d+\.$/);
    expect(view.store.getState().form.quantization.extensions).toBeUndefined();
  });

  it('puts the preflight\'s per-layer refusal on its row: a runtime format mixed with the backend, and MLX\'s group of 128 on head_dim 64', async () => {
    const view = await renderWorkbench();
    await pick(view, 2, 'value', 'format:llama.cpp:q8_0');
    // the other side of an unset layer takes the same format
    expect(view.store.getState().form.quantization.extensions?.layerMap).toEqual([{ layer: 2, formatKey: 'llama.cpp:q8_0', formatValue: 'llama.cpp:q8_0' }]);
    expect(row(2).dataset['refused']).toBe('false');
    expect(screen.getAllByTestId('layer-cell')[2]!.dataset['format']).toBe('K llama.cpp:q8_0, V llama.cpp:q8_0');

    await pick(view, 2, 'key', 'bits:4');
    expect(row(2).dataset['refused']).toBe('true');
    expect(within(row(2)).getByTestId('layer-row-refusal').textContent).toContain('layer 2 stores its values in a runtime format and its keys with quanto\'s quantizer');
    expect(screen.getByTestId('preflight-refusal')).toBeTruthy();

    await pick(view, 2, 'key', 'full');
    expect(row(2).dataset['refused']).toBe('false');
    await pick(view, 3, 'key', 'format:mlx:4bit-g128');
    expect(row(3).dataset['refused']).toBe('true');
    expect(within(row(3)).getAllByTestId('layer-row-refusal')[0]!.textContent).toContain('The last dimension of the matrix needs to be divisible by the quantization group size 128');
    expect(row(4).dataset['refused']).toBe('false');

    fireEvent.click(within(row(3)).getByTestId('layer-row-reset'));
    await view.settle();
    expect(view.store.getState().form.quantization.extensions?.layerMap).toEqual([{ layer: 2, nbitsKey: 'full', formatValue: 'llama.cpp:q8_0' }]);
    expect(screen.getByTestId('preflight-status').textContent).toMatch(/^OK/);
  });

  it('fills the rows from a loaded file, and saves what it shows as YAML that reads back to the same map', async () => {
    const view = await renderWorkbench();
    const saved = vi.spyOn(view.controller, 'saveText');
    const file = new File(['0: full\n3: {nbits_key: 2, nbits_value: full}\n'], 'preset.yaml', { type: 'text/yaml' });
    fireEvent.change(screen.getByTestId('layer-map-input'), { target: { files: [file] } });
    await vi.waitFor(() => expect(view.store.getState().form.quantization.extensions?.layerMap).toHaveLength(2));
    await view.settle();
    expect(row(0).dataset['set']).toBe('true');
    expect((within(row(0)).getByTestId('layer-side-value') as HTMLSelectElement).value).toBe('full');
    expect((within(row(3)).getByTestId('layer-side-key') as HTMLSelectElement).value).toBe('bits:2');
    expect(row(1).dataset['set']).toBe('false');

    await pick(view, 5, 'value', 'bits:2');
    fireEvent.click(screen.getByTestId('layer-map-save'));
    expect(saved).toHaveBeenCalledTimes(1);
    const [fileName, mimeType, text] = saved.mock.calls[0]!;
    expect(fileName).toMatch(/-layer-map\.yaml$/);
    expect(mimeType).toBe('application/yaml');
    expect(parseLayerMap(text, fileName)).toEqual(view.store.getState().form.quantization.extensions?.layerMap);
    expect(parseLayerMap(text, fileName)).toEqual([
      { layer: 0, fullPrecision: true }, { layer: 3, nbitsKey: 2, nbitsValue: 'full' }, { layer: 5, nbitsKey: 4, nbitsValue: 2 },
    ]);

    // every layer, as --write-layer-map writes the plan: the defaults (quanto 4-bit) written out
    fireEvent.click(screen.getByTestId('layer-map-save-resolved'));
    const [resolvedName, , resolvedText] = saved.mock.calls[1]!;
    expect(resolvedName).toMatch(/-cache-plan\.yaml$/);
    const resolved = parseLayerMap(resolvedText, resolvedName);
    expect(resolved).toHaveLength(view.store.getState().model.summary!.config!.geometry.numLayers);
    expect(resolved.slice(0, 6)).toEqual([
      { layer: 0, fullPrecision: true }, { layer: 1, nbitsKey: 4, nbitsValue: 4 }, { layer: 2, nbitsKey: 4, nbitsValue: 4 },
      { layer: 3, nbitsKey: 2, nbitsValue: 'full' }, { layer: 4, nbitsKey: 4, nbitsValue: 4 }, { layer: 5, nbitsKey: 4, nbitsValue: 2 },
    ]);
  });
});
