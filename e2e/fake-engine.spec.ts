import type { WorkbenchCommand } from '../app/protocol/workbench-api.js';
import type { Workbench } from './pages/workbench.js';
import { expect, test } from './fixtures.js';

/** Sends a command as the Electron host's menu would, through the fake engine of the test build. */
async function emitCommand(workbench: Workbench, command: WorkbenchCommand): Promise<void> {
  await workbench.page.evaluate((c) => {
    (globalThis as unknown as { __kvscopeFake: { emitCommand(command: unknown): void } }).__kvscopeFake.emitCommand(c);
  }, command);
}

/**
 * What the real engine cannot produce on demand, on the fake-engine test build: a worker that
 * crashes, and menu commands from the host (performance.spec.ts streams 10,000 steps × 32 layers).
 */
test.describe('workbench on the fake engine', () => {
  test('a crashed worker shows its code, message and fix, and the next run works', async ({ openWorkbench }) => {
    const workbench = await openWorkbench({ engine: 'fake' });
    const { run, live } = workbench;
    await run.setPrompt('Once upon a time #crash');
    await run.setMaxNewTokens(100);
    await run.run();
    expect(await live.waitForEnd()).toBe('Failed');
    await expect(live.errorPart('code')).toHaveText('worker-crashed');
    await expect(live.errorPart('fix')).toContainText('workbench itself keeps working');
    await workbench.screenshot('worker-crashed');
    await run.setPrompt('Once upon a time');
    await run.setMaxNewTokens(40);
    await run.run();
    expect(await live.waitForEnd()).toBe('Done');
  });

  test('follows the system\'s dark and light scheme live, charts included', async ({ openWorkbench }) => {
    const workbench = await openWorkbench({ engine: 'fake' });
    const { page, run, live } = workbench;
    await run.setMaxNewTokens(300);
    await run.run();
    expect(await live.waitForEnd()).toBe('Done');
    const backgroundLuminance = (): Promise<number> => page.evaluate(() => {
      // e2e/ compiles without DOM types: the page's globals, as far as this needs them
      const page = globalThis as unknown as { getComputedStyle(element: unknown): { backgroundColor: string }; document: { body: unknown } };
      const [r, g, b] = page.getComputedStyle(page.document.body).backgroundColor.match(/\d+/g)!.map(Number);
      return (0.2126 * r! + 0.7152 * g! + 0.0722 * b!) / 255;
    });
    await page.emulateMedia({ colorScheme: 'dark' });
    await expect(page.getByTestId('app')).toHaveAttribute('data-color-scheme', 'dark');
    expect(await backgroundLuminance()).toBeLessThan(0.2);
    await workbench.screenshotResults('dark-scheme');
    await page.emulateMedia({ colorScheme: 'light' });
    await expect(page.getByTestId('app')).toHaveAttribute('data-color-scheme', 'light');
    expect(await backgroundLuminance()).toBeGreaterThan(0.8);
  });

  test('follows host commands: a dropped folder opens, run and stop come from the menu', async ({ openWorkbench }) => {
    const workbench = await openWorkbench({ engine: 'fake', fakeQuery: 'interval=40&batch=2' });
    await emitCommand(workbench, { type: 'model-dropped', path: '/fake/models/jamba-1.5-mini' });
    await expect(workbench.model.name).toHaveText('jamba-1.5-mini');
    const layers = await workbench.model.layers();
    expect(layers.filter(([letter]) => letter === 'M').every(([, plan]) => plan === 'none')).toBe(true);
    expect(layers.filter(([letter]) => letter === 'F')).toHaveLength(4);
    await workbench.screenshot('jamba-layers');

    await workbench.model.openSynthetic('synthetic');
    await workbench.run.setMaxNewTokens(2000);
    await emitCommand(workbench, { type: 'run' });
    await workbench.live.waitForSteps(10);
    await emitCommand(workbench, { type: 'stop' });
    expect(await workbench.live.waitForEnd()).toBe('Cancelled');
  });

  test('the fake machine has no WebGPU adapter, as the build machines have none: not offered, with the probe\'s reason; webgpu=adapter offers it', async ({ openWorkbench }) => {
    const workbench = await openWorkbench({ engine: 'fake' });
    const { run } = workbench;
    await expect(run.executionProvider('webgpu')).toBeDisabled();
    await expect(run.executionProvider('webgpu')).toHaveText('webgpu (unavailable)');
    await run.root.getByText(/^Why .* unavailable$/).click();
    const reason = run.executionProviderReasons.locator('li').filter({ hasText: /^webgpu:/ });
    await expect(reason).toContainText('no adapter was found here: Failed to get a WebGPU adapter');
    await expect(reason).toContainText('VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json');

    const withAdapter = await openWorkbench({ engine: 'fake', fakeQuery: 'webgpu=adapter' });
    await expect(withAdapter.run.executionProvider('webgpu')).toBeEnabled();
    await expect(withAdapter.run.executionProvider('webgpu')).toHaveText('webgpu');
  });
});
