import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseRunRecord } from '../app/record/parse-run-record.js';
import { PROJECT_ROOT } from './environment.js';
import { expect, test } from './fixtures.js';
import { serverUrl } from './global-setup.js';

/**
 * Issue 9, item 4, as a user meets it: a serve host whose data folder cannot be written (below a
 * regular file, so mkdir and every write fail even for root, as a full or read-only disk does) still
 * opens the model and finishes the run; the result says it was not saved and what to do, and JSON and
 * CSV export work by the run id the host keeps it under for the session.
 */
test.describe('a run the host cannot save', () => {
  test('says so, and exports JSON and CSV by the live run id (real engine, unwritable data folder)', async ({ openWorkbench }, testInfo) => {
    test.skip(testInfo.project.name === 'electron', 'starts a serve host of its own; the Electron project shares the backend (workbench-backend.test.ts)');
    const dir = mkdtempSync(join(tmpdir(), 'kvscope-e2e-unwritable-'));
    writeFileSync(join(dir, 'blocker'), '');
    const env = { ...process.env };
    delete env['VK_ICD_FILENAMES'];
    const server = spawn(process.execPath, [join(PROJECT_ROOT, 'out/node/main/cli/kvscope.js'), 'serve', '--port', '0', '--data-dir', join(dir, 'blocker', 'data')], {
      cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env,
    });
    try {
      const workbench = await openWorkbench({ serveUrl: await serverUrl(server, 60_000) });
      const { run, live, model } = workbench;
      await expect(model.name).toHaveText('synthetic');
      await run.setMaxNewTokens(12);
      await run.run();
      expect(await live.waitForEnd()).toBe('Done');
      const notice = live.root.getByTestId('run-not-saved');
      await expect(notice).toBeVisible();
      await expect(live.root.getByTestId('run-not-saved-message')).toContainText('This run could not be saved to the history:');
      await expect(live.root.getByTestId('run-not-saved-fix')).toContainText('KVSCOPE_DATA_DIR');
      await expect(live.root.getByTestId('result-summary')).toContainText('not saved');
      const runId = (await live.root.locator('.run-id').textContent())!.replace(/^\s*·\s*/, '').trim();
      await expect(live.root.getByTestId('run-not-saved-message')).toContainText(`can still be exported (run ${runId})`);

      const json = await live.exportRun('json');
      expect(json.suggestedFilename()).toBe(`kvscope-run-${runId}.json`);
      const record = parseRunRecord(readFileSync((await json.path())!, 'utf8'), json.suggestedFilename());
      expect(record.id).toBe(runId);
      expect(record.generatedTokenIds).toHaveLength(12);
      expect(record.diagnostics.map((d) => d.code)).toContain('run-not-saved');
      const csv = await live.exportRun('csv');
      expect(readFileSync((await csv.path())!, 'utf8').trim().split('\r\n')).toHaveLength(1 + 12);
      await workbench.screenshot('run-not-saved');
    } finally {
      server.kill('SIGTERM');
      await new Promise((resolve) => (server.exitCode !== null ? resolve(undefined) : server.once('exit', resolve)));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
