import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseRunRecord } from '../app/record/parse-run-record.js';
import type { RunRecord } from '../app/record/run-record.js';
import { STORIES_DIR } from './environment.js';
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.js';
import type { Workbench } from './pages/workbench.js';

/**
 * Warm across changes (issue 25, point 8): the host keeps the sessions of recent settings, so going
 * back to bits run a moment ago reuses that session instead of loading the graph again. Asserted on
 * what the engine reports (the result's `sessionReused`), not on a time.
 */
test('back to 4-bit after a 2-bit run reuses the 4-bit session; the result and the record say so', async ({ openWorkbench }) => {
  const workbench = await storiesQuanto4(await openWorkbench());
  const { run, page } = workbench;
  const reused: string[] = [];
  for (const nbits of [4, 4, 2, 4] as const) {
    await run.setCache({ nbits });
    const record = await runToDone(workbench, `${nbits}-bit`);
    const session = page.getByTestId('result-session');
    await expect(session).toBeVisible();
    reused.push((await session.getAttribute('data-reused'))!);
    expect(String(record.timings.sessionReused)).toBe(reused.at(-1));
  }
  // The rerun reuses; back to 4-bit after the 2-bit run (a graph of its own) finds its session warm,
  // which one kept session could not give. Whether the 2-bit session was opened or kept depends on
  // what the suite's other specs ran on this server before (the host keeps recent sessions), so it is not asserted.
  expect([reused[1], reused[3]]).toEqual(['true', 'true']);
  await expect(page.getByTestId('result-session')).toContainText('warm');
  await workbench.screenshotResults('warm-session-reused');
  await page.emulateMedia({ colorScheme: 'dark' });
  await expect(page.getByTestId('result-session')).toBeVisible();
  await expect(page.getByTestId('result-session')).toContainText('warm');
  await workbench.screenshotResults('warm-session-reused-dark');
});

/**
 * A change of backend (quanto → hqq) is a change the warm session must follow too: the run check
 * settles on the new backend (never left at "checking…"), and Run reaches "Generating…" and Done on
 * hqq. How soon is logged for the note, not asserted (a loaded machine would make it flaky).
 */
test('a change of backend from quanto to hqq: the run check settles and Run reaches "Generating…"', async ({ openWorkbench }) => {
  const workbench = await storiesQuanto4(await openWorkbench());
  const { run, page } = workbench;
  for (const backend of ['quanto', 'hqq'] as const) {
    await run.setCache({ backend });
    const check = page.getByTestId('preflight-panel');
    await expect(check, `run check after choosing ${backend}`).toHaveAttribute('data-stale', 'false');
    await expect(check.getByTestId('check-time')).toBeVisible();
    const record = await runToDone(workbench, `backend ${backend}`);
    expect(record.settings.quantization.backend).toBe(backend);
  }
});

/** Both tests start here: stories260k open, quanto 4-bit in groups of 32 with a residual of 16, 24 new tokens. */
async function storiesQuanto4(workbench: Workbench): Promise<Workbench> {
  const { model, run } = workbench;
  await model.openFolder(STORIES_DIR);
  await expect(model.name).toHaveText('stories260k');
  await run.setCache({ backend: 'quanto', nbits: 4, groupSize: 32, residualLength: 16 });
  await run.setMaxNewTokens(24);
  return workbench;
}

/**
 * Run after a change (`label` names it): the status shows "Generating…" on the way to Done (how soon
 * is logged, the warm bench's to judge, `npm run bench -- warm`, not a test's); resolves with the saved run record.
 */
async function runToDone(workbench: Workbench, label: string): Promise<RunRecord> {
  const { run, live, page } = workbench;
  const statuses = statusesFromClick(page);
  await run.run();
  expect(await live.waitForEnd()).toBe('Done');
  const seen = await statuses;
  expect(seen.texts, `run status after ${label}`).toContain('Generating…');
  console.log(`[measure] ${label}: Run → "Generating…" ${seen.generatingMs?.toFixed(0)} ms`);
  const id = (await live.savedRunId.textContent())!;
  return parseRunRecord(readFileSync(join(workbench.dataDir!, 'runs', `${id}.json`), 'utf8'), `${id}.json`);
}

/**
 * Every run status the header shows from the Run click until Done, watched in the page (a status
 * shown for a few milliseconds is still seen), with when "Generating…" came.
 */
function statusesFromClick(page: Page): Promise<{ texts: string[]; generatingMs: number | null }> {
  return page.evaluate(() => new Promise<{ texts: string[]; generatingMs: number | null }>((resolve) => {
    const scope = globalThis as unknown as { document: { querySelector(selector: string): unknown }; performance: { now(): number }; MutationObserver: new (callback: () => void) => { observe(target: unknown, options: object): void; disconnect(): void } };
    const button = scope.document.querySelector('[data-testid="run-panel-run"]') as { addEventListener(type: string, listener: () => void, options: object): void };
    button.addEventListener('click', () => {
      const clicked = scope.performance.now();
      const texts: string[] = [];
      let generatingMs: number | null = null;
      const observer = new scope.MutationObserver(() => {
        const status = scope.document.querySelector('[data-testid="run-status"]') as { textContent: string } | null;
        const text = status?.textContent ?? '';
        if (text !== texts.at(-1)) texts.push(text);
        if (text === 'Generating…' && generatingMs === null) generatingMs = scope.performance.now() - clicked;
        if (/^(Done|Cancelled|Failed)$/.test(text)) {
          observer.disconnect();
          resolve({ texts, generatingMs });
        }
      });
      observer.observe(scope.document.querySelector('[data-testid="app"]'), { subtree: true, childList: true, characterData: true });
    }, { once: true, capture: true });
  }));
}
