import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { parseLayerMap } from '../app/cache/layer-map.js';
import { writeFixtureFolder } from '../app/node/model/test-support/layout-fixtures.js';
import { expect, test } from './fixtures.js';
import { ExtensionsFields } from './pages/extensions-fields.js';
import { LayerMapEditor } from './pages/layer-map-editor.js';

/**
 * The per-layer plan editor in the run panel (a kvscope extension) on the embedded default model
 * (synthetic: 8 Llama layers, head_dim 64): edits reach the layer strip, the memory what-if and the
 * run check; the plan saves as a layer-map YAML that reads back to the same map; a layer's
 * impossible choice shows the runtime's refusal on its own row.
 */
test.describe('the per-layer plan editor', () => {
  test('layers 0–1 in full precision and layer 2\'s values in llama.cpp q8_0: strip, what-if, saved YAML, and MLX refusing layer 3 on its row', async ({ openWorkbench }) => {
    const workbench = await openWorkbench();
    const { page, run } = workbench;
    await expect(workbench.model.name).toHaveText('synthetic');
    await page.setViewportSize({ width: 1280, height: 900 });
    const extensions = new ExtensionsFields(page);
    await extensions.open();
    const editor = new LayerMapEditor(page);
    await expect(editor.root.getByTestId('layer-row')).toHaveCount(8);
    await expect(editor.summary).toHaveText('every layer the default');
    await expect(extensions.active).toHaveText('(none active)');
    await expect(run.preflightStatus).toHaveText(/^OK/);
    const total = page.getByTestId('whatif-total');
    await expect(total).not.toBeEmpty();
    const before = await total.textContent();
    await expect(page.locator('[data-testid="whatif-row"][data-plan="dynamic"]')).toHaveCount(0);
    const cells = page.getByTestId('layer-cell');
    await expect(cells).toHaveCount(8);

    await editor.setRange('0-1', 'full', 'full');
    for (const layer of [0, 1]) await expect(cells.nth(layer)).toHaveAttribute('data-plan', 'full-precision');
    await expect(cells.nth(2)).toHaveAttribute('data-plan', 'quantized');
    await expect(extensions.active).toHaveText('(per-layer settings)');

    // layer 2's values in a runtime format: an unset layer takes it on both sides; the keys then kept exact
    await editor.setSide(2, 'value', 'format:llama.cpp:q8_0');
    await editor.setSide(2, 'key', 'full');
    await expect(cells.nth(2)).toHaveAttribute('data-plan', 'values-only');
    await expect(cells.nth(2)).toHaveAttribute('data-format', 'V llama.cpp:q8_0');
    await expect(extensions.active).toHaveText('(per-layer settings, runtime KV format (write-once))');
    await expect(editor.summary).toContainText('3 layers set, 5 the default');
    await expect(total).not.toHaveText(before!);
    // the what-if counts layers 0–1 apart, as a full-precision cache
    await expect(page.locator('[data-testid="whatif-row"][data-plan="dynamic"]')).toHaveCount(1);
    await expect(run.preflightStatus).toHaveText(/^OK/);
    await expect(run.runButton).toBeEnabled();

    const download = await editor.save();
    expect(download.suggestedFilename()).toBe('synthetic-layer-map.yaml');
    const text = readFileSync((await download.path())!, 'utf8');
    expect(parseLayerMap(text, download.suggestedFilename())).toEqual([
      { layer: 0, fullPrecision: true },
      { layer: 1, fullPrecision: true },
      { layer: 2, nbitsKey: 'full', formatValue: 'llama.cpp:q8_0' },
    ]);
    await expect(workbench.notices('success')).toContainText('Downloaded synthetic-layer-map.yaml');

    // head_dim 64 is no multiple of MLX's group of 128: MLX's own words on layer 3's row, Run disabled
    await editor.setSide(3, 'key', 'format:mlx:4bit-g128');
    await expect(editor.row(3)).toHaveAttribute('data-refused', 'true');
    // an unset layer given a format on its keys takes it on its values too: one refusal in MLX's words, naming both sides
    await expect(editor.refusal(3)).toHaveCount(1);
    await expect(editor.refusal(3)).toContainText('The last dimension of the matrix needs to be divisible by the quantization group size 128');
    await expect(editor.refusal(3)).toContainText('format_key (layer 3) mlx:4bit-g128');
    await expect(editor.refusal(3)).toContainText('format_value (layer 3) mlx:4bit-g128');
    for (const layer of [0, 1, 2, 4]) await expect(editor.row(layer)).toHaveAttribute('data-refused', 'false');
    await expect(run.runButton).toBeDisabled();
    await editor.row(3).scrollIntoViewIfNeeded();
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await workbench.screenshot(`layer-plan-editor-${scheme}`);
    }
    await page.emulateMedia({ colorScheme: 'light' });

    // back to the default: the row's refusal goes, and the run may start
    await editor.row(3).getByTestId('layer-row-reset').click();
    await expect(editor.row(3)).toHaveAttribute('data-refused', 'false');
    await expect(run.runButton).toBeEnabled();
  });

  test('a loaded preset fills the rows; Ctrl+↓ moves to the same side of the next row, and the list is one Tab stop', async ({ openWorkbench }) => {
    const workbench = await openWorkbench();
    const extensions = new ExtensionsFields(workbench.page);
    await extensions.open();
    const editor = new LayerMapEditor(workbench.page);
    await extensions.root.getByTestId('layer-map-input').setInputFiles({
      name: 'preset.yaml', mimeType: 'text/yaml', buffer: Buffer.from('0: {nbits_key: 2, nbits_value: 4}\n7: full\n'),
    });
    await expect(editor.summary).toContainText('2 layers set');
    await expect(editor.row(0).getByTestId('layer-side-key')).toHaveValue('bits:2');
    await expect(editor.row(7).getByTestId('layer-side-value')).toHaveValue('full');
    await expect(editor.row(3)).toHaveAttribute('data-set', 'false');
    await editor.row(0).getByTestId('layer-side-value').focus();
    await workbench.page.keyboard.press('Control+ArrowDown');
    await expect(editor.row(1).getByTestId('layer-side-value')).toBeFocused();
    await expect(editor.row(1).getByTestId('layer-side-value')).toHaveValue('default');
    // the list is one Tab stop, at the row last in focus: Tab leaves it, Shift+Tab comes back to that row
    await workbench.page.keyboard.press('Tab');
    await expect(editor.root.getByTestId('layer-rows').locator(':focus')).toHaveCount(0);
    await workbench.page.keyboard.press('Shift+Tab');
    await expect(editor.row(1).getByTestId('layer-side-value')).toBeFocused();
  });
});

test.describe('the per-layer plan editor on a deep model', () => {
  test('80 layers (a tiny Llama decoder as deep as Llama-3-70B): the rows scroll in a bounded box, all → K 4 / V 2 sets every layer, light and dark at 1280 px', async ({ openWorkbench }) => {
    const folder = mkdtempSync(join(tmpdir(), 'kvscope-e2e-80-layers-'));
    try {
      // a tiny random-weight Llama decoder with 80 layers (Optimum's layout): Llama-3-70B's depth, not its width
      await writeFixtureFolder(folder, { graphs: [{ path: 'onnx/model.onnx', options: { layers: 80 } }] });
      const workbench = await openWorkbench();
      const { page } = workbench;
      await page.setViewportSize({ width: 1280, height: 900 });
      await workbench.model.openFolder(folder);
      await expect(workbench.model.name).toHaveText(basename(folder));
      const extensions = new ExtensionsFields(page);
      await extensions.open();
      const editor = new LayerMapEditor(page);
      await expect(editor.root.getByTestId('layer-row')).toHaveCount(80);
      const list = editor.root.getByTestId('layer-rows');
      const box = await list.evaluate((element) => ({ client: element.clientHeight, scroll: element.scrollHeight }));
      expect(box.client, 'the list keeps a bounded height').toBeLessThan(400);
      expect(box.scroll, 'and scrolls through 80 rows').toBeGreaterThan(box.client * 3);

      await editor.setRange('all', 'bits:4', 'bits:2');
      await expect(editor.summary).toContainText('80 layers set, 0 the default');
      await expect(editor.row(79).getByTestId('layer-side-value')).toHaveValue('bits:2');
      await editor.setRange('0-3', 'full', 'full');
      const cells = page.getByTestId('layer-cell');
      await expect(cells).toHaveCount(80);
      for (const layer of [0, 3]) await expect(cells.nth(layer)).toHaveAttribute('data-plan', 'full-precision');
      await expect(cells.nth(4)).toHaveAttribute('data-plan', 'quantized');
      // one row's edit to the strip's cell changing in the DOM, timed in the page (figure for the report; the machine is shared, so no bound here)
      const editMs = await page.evaluate(async () => {
        const scope = globalThis as unknown as { document: { querySelector(selector: string): { value: string; dispatchEvent(event: unknown): void; getAttribute(name: string): string | null } | null }; Event: new (type: string, init: object) => unknown; MutationObserver: new (callback: () => void) => { observe(target: unknown, options: object): void; disconnect(): void }; performance: { now(): number } };
        const select = scope.document.querySelector('[data-testid="layer-row"][data-layer="50"] select[data-side="key"]')!;
        const cell = scope.document.querySelector('[data-testid="layer-strip"] [data-testid="layer-cell"]:nth-child(51)')!;
        const start = scope.performance.now();
        await new Promise<void>((resolve) => {
          const observer = new scope.MutationObserver(() => {
            if (cell.getAttribute('data-plan') !== 'values-only') return;
            observer.disconnect();
            resolve();
          });
          observer.observe(cell, { attributes: true });
          select.value = 'full';
          select.dispatchEvent(new scope.Event('change', { bubbles: true }));
        });
        return scope.performance.now() - start;
      });
      console.log(`[layer-plan-editor] 80 layers: one row's edit to the layer strip's cell updated in ${editMs.toFixed(1)} ms`);
      await expect(editor.row(50)).toHaveAttribute('data-set', 'true');
      await expect(cells.nth(50)).toHaveAttribute('data-plan', 'values-only');
      await editor.row(40).scrollIntoViewIfNeeded();
      for (const scheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        await workbench.screenshot(`layer-plan-editor-80-${scheme}`);
      }
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
