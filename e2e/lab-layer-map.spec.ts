import { expect } from '@playwright/test';
import { test } from './fixtures.js';
import { STORIES_DIR } from './environment.js';
import { ExtensionsFields } from './pages/extensions-fields.js';
import { LabView } from './pages/lab-view.js';

test.describe('the cache plan from the Run panel (issue 25)', () => {
  test('a layer map with a full-precision side shows on the layer strip, and a sweep built from the panel measures that map', async ({ openWorkbench }) => {
    const workbench = await openWorkbench();
    await workbench.model.openFolder(STORIES_DIR);
    await expect(workbench.model.name).toHaveText('stories260k');
    await workbench.run.setCache({ groupSize: 32, residualLength: 32 });
    const extensions = new ExtensionsFields(workbench.page);
    await extensions.open();
    // Layers 0–3 in full precision, layer 4's keys at 2 bits and its values in full precision.
    await extensions.root.getByTestId('layer-map-input').setInputFiles({
      name: 'map.yaml', mimeType: 'text/yaml', buffer: Buffer.from('0: full\n1: full\n2: full\n3: full\n4: {nbits_key: 2, nbits_value: full}\n'),
    });
    await expect(extensions.root.getByTestId('layer-map-summary')).toContainText('5 layers set');
    const cells = workbench.page.getByTestId('layer-cell');
    await expect(cells).toHaveCount(5);
    for (const layer of [0, 1, 2, 3]) await expect(cells.nth(layer)).toHaveAttribute('data-plan', 'full-precision');
    await expect(cells.nth(4)).toHaveAttribute('data-plan', 'keys-only');
    // full precision and keys-only read apart at a glance, in light and dark
    for (const scheme of ['light', 'dark'] as const) {
      await workbench.page.emulateMedia({ colorScheme: scheme });
      const paint = (index: number): Promise<{ background: string; text: string }> => cells.nth(index).evaluate((cell) => {
        const scope = globalThis as unknown as { getComputedStyle(element: unknown): { backgroundColor: string; backgroundImage: string; color: string } };
        const style = scope.getComputedStyle(cell);
        return { background: `${style.backgroundColor} ${style.backgroundImage}`, text: style.color };
      });
      const [full, keysOnly] = [await paint(0), await paint(4)];
      expect(full.background, `full-precision cell in ${scheme}`).not.toMatch(/^rgba\(0, 0, 0, 0\) none$/);
      expect(full.text, `full-precision cell's letter in ${scheme}`).not.toBe(full.background.split(' none')[0]);
      expect(keysOnly.background, `keys-only cell in ${scheme}`).not.toBe(full.background);
      await workbench.screenshot(`layer-map-strip-${scheme}`);
    }
    await workbench.page.emulateMedia({ colorScheme: 'light' });

    const lab = new LabView(workbench.page);
    await lab.open();
    await lab.vary('nbits', '2');
    await lab.setWindows(128, 1);
    await expect(lab.startButton).toHaveText('Evaluate');
    await lab.startButton.click();
    await lab.waitDone();
    await expect(lab.rows).toHaveCount(1);
    const [row] = await lab.tableByColumn();
    // Plain 2-bit with groups of 32 stores under 8 bits per value here; the map keeps 4.5 of 5 layers' values in fp32 (about 29 bits).
    const bits = Number.parseFloat(row!['bits']!);
    expect(bits, `bits per value of the point: ${row!['bits']}`).toBeGreaterThan(25);
    expect(bits).toBeLessThan(32);
  });
});
