import { expect } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from './fixtures.js';
import { dataDir, PROJECT_ROOT } from './environment.js';
import { LabView } from './pages/lab-view.js';

test.describe('the Lab draws a retrieval sweep (real engine)', () => {
  test('a passkey sweep on the retrieval testbed, run by kvscope sweep into the Lab\'s folder: the depth × length map per configuration, its difference, exported', async ({ openWorkbench }) => {
    const data = dataDir();
    test.skip(data === null, 'the browser project against kvscope serve only (its data folder holds the Lab\'s sweeps)');
    // the CLI runs the sweep into the Lab's sweep folder; the Lab lists and opens it
    const spec = join(data!, 'passkey-sweep.json');
    writeFileSync(spec, JSON.stringify({
      model: 'synthetic-retrieval',
      fixed: { task: 'passkey', lengths: '256', depths: '0,50,100', samples: 1, cache: 'quantized', backend: 'quanto' },
      grid: { nbits: [2, 4] },
    }));
    execFileSync(process.execPath, [join(PROJECT_ROOT, 'out/node/main/cli/kvscope.js'), 'sweep', '--spec', spec, '--out', join(data!, 'sweeps', 'passkey-map')], {
      env: { ...process.env, KVSCOPE_CACHE_DIR: join(data!, 'cli-cache') }, stdio: 'pipe', timeout: 120_000,
    });
    const workbench = await openWorkbench();
    const lab = new LabView(workbench.page);
    await lab.open();
    await lab.root.getByTestId('lab-history-refresh').click();
    await lab.root.locator('[data-testid="lab-history-row"][data-sweep-id="passkey-map"]').getByTestId('lab-history-open').click();
    const map = lab.root.getByTestId('lab-retrieval-map');
    await expect(map).toBeVisible();
    // three depths at one length: three cells
    await expect(map).toHaveAttribute('data-points', '3');
    await expect(lab.root.getByTestId('lab-retrieval-group').locator('option')).toHaveCount(2);
    // the 2-bit map, exported as SVG: its title names the task, what it shows and the configuration; its cells say 0.00
    const svgDownload = workbench.page.waitForEvent('download');
    await lab.root.getByTestId('export-svg-lab-retrieval').click();
    const svg = readFileSync(await (await svgDownload).path(), 'utf8');
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect(svg).toContain('passkey: accuracy by depth and length, quanto 2-bit');
    expect(svg).toContain('sweep passkey-map');
    expect(svg).toContain('>0.00<');
    expect(svg).not.toContain('>1.00<');
    // its difference to full precision: −1 in every cell
    await lab.root.getByTestId('lab-retrieval-mode').selectOption('difference');
    const diffDownload = workbench.page.waitForEvent('download');
    await lab.root.getByTestId('export-svg-lab-retrieval').click();
    const diff = readFileSync(await (await diffDownload).path(), 'utf8');
    expect(diff).toContain('accuracy − full precision by depth and length');
    expect(diff.match(/>-1\.00</g)).toHaveLength(3);
    // the 4-bit configuration keeps every pass key
    await lab.root.getByTestId('lab-retrieval-mode').selectOption('accuracy');
    await lab.root.getByTestId('lab-retrieval-group').selectOption({ index: 1 });
    const fourDownload = workbench.page.waitForEvent('download');
    await lab.root.getByTestId('export-svg-lab-retrieval').click();
    const four = readFileSync(await (await fourDownload).path(), 'utf8');
    expect(four.match(/>1\.00</g)).toHaveLength(3);
    await workbench.screenshot('lab-retrieval-map');
  });

  test('a passkey sweep started from the Lab\'s setup: the task\'s fields, progress, two rows and each configuration\'s map', async ({ openWorkbench }) => {
    const data = dataDir();
    test.skip(data === null, 'the browser project against kvscope serve only (the testbed\'s folder is built by the CLI into a cache the test names)');
    // the workbench opens model folders and its own synthetic models; the testbed's folder is built by one CLI run
    const cache = join(data!, 'setup-cache');
    execFileSync(process.execPath, [join(PROJECT_ROOT, 'out/node/main/cli/kvscope.js'), 'eval', '--task', 'passkey', '--model', 'synthetic-retrieval', '--lengths', '256', '--depths', '50', '--cache', 'dynamic'], {
      env: { ...process.env, KVSCOPE_CACHE_DIR: cache }, stdio: 'pipe', timeout: 120_000,
    });
    const folder = readdirSync(join(cache, 'models')).find((name) => name.startsWith('synthetic-retrieval-v'))!;
    const workbench = await openWorkbench();
    await workbench.model.openFolder(join(cache, 'models', folder));
    await workbench.run.setCache({ backend: 'quanto' });
    const lab = new LabView(workbench.page);
    await lab.open();
    await lab.vary('nbits', '2, 4');
    await lab.root.getByTestId('lab-task').selectOption('passkey');
    // the text's window fields give way to the task's
    await expect(lab.root.getByTestId('lab-context')).toHaveCount(0);
    await lab.root.getByTestId('lab-lengths').fill('256');
    await lab.root.getByTestId('lab-depths').fill('0, 100');
    await lab.root.getByTestId('lab-name').fill('passkey from the setup');
    await expect(lab.startButton).toHaveText('Sweep 2 points');
    await lab.startButton.click();
    await lab.waitDone();
    await expect(lab.root.getByTestId('lab-progress-text')).toContainText('2 of 2 points complete');
    await expect(lab.rows).toHaveCount(2);
    const map = lab.root.getByTestId('lab-retrieval-map');
    await expect(map).toBeVisible();
    // two depths at one length: two cells; the 2-bit map loses both pass keys, the 4-bit one keeps them (as kvscope sweep finds)
    await expect(map).toHaveAttribute('data-points', '2');
    const download = workbench.page.waitForEvent('download');
    await lab.root.getByTestId('export-svg-lab-retrieval').click();
    const svg = readFileSync(await (await download).path(), 'utf8');
    expect(svg).toContain('passkey: accuracy by depth and length, quanto 2-bit');
    expect(svg.match(/>0\.00</g)).toHaveLength(2);
    await lab.root.getByTestId('lab-retrieval-group').selectOption({ index: 1 });
    const fourDownload = workbench.page.waitForEvent('download');
    await lab.root.getByTestId('export-svg-lab-retrieval').click();
    expect(readFileSync(await (await fourDownload).path(), 'utf8').match(/>1\.00</g)).toHaveLength(2);
  });
});
