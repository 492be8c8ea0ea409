import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseRunRecord } from '../app/record/parse-run-record.js';
import { STORIES_DIR } from './environment.js';
import { expect, test } from './fixtures.js';
import { ExtensionsFields } from './pages/extensions-fields.js';

test.describe('kvscope extensions in the workbench', () => {
  test('stories260k with K8V4 and 4 sink tokens: named in the panel and the preflight, saved in the record with their bytes', async ({ openWorkbench }) => {
    const workbench = await openWorkbench();
    const { model, run, live } = workbench;
    await model.openFolder(STORIES_DIR);
    await expect(model.name).toHaveText('stories260k');
    await run.setCache({ backend: 'hqq', nbits: 4, axisKey: 0, axisValue: 0, groupSize: 32, residualLength: 16 });
    const extensions = new ExtensionsFields(workbench.page);
    await expect(extensions.active).toHaveText('(none active)');
    await extensions.open();
    await extensions.setBits('key', 8);
    await extensions.setSinkTokens(4);
    await expect(extensions.active).toHaveText('(K and V bits apart, attention sinks)');
    await expect(run.preflightStatus).toHaveText(/^OK/);
    await expect(run.diagnostic('kvscope-extensions')).toContainText('kvscope extensions (beyond transformers)');
    await run.setMaxNewTokens(40);
    await run.setReference(true);
    await run.run();
    expect(await live.waitForEnd()).toBe('Done');

    const savedRunId = (await live.savedRunId.textContent())!;
    const record = parseRunRecord(readFileSync(join(workbench.dataDir!, 'runs', `${savedRunId}.json`), 'utf8'), `${savedRunId}.json`);
    expect(record.settings.quantization.extensions).toEqual({ nbitsKey: 8, sinkTokens: 4 });
    expect(record.extensions!.map((item) => item.id)).toEqual(['kv-bits-apart', 'attention-sinks']);
    // 4 sink tokens of K and V per layer, 4 heads × 8 dims in float32 (the fp32 graph)
    expect(record.kvBytes[0]!.extensions).toMatchObject({ sinkTokens: 4, sinkBytes: 2 * 4 * 4 * 8 * 4 });

    // named as such wherever the run is shown: the live header, the CSV export, the saved run
    const named = 'kvscope extensions (beyond transformers) K and V bits apart (K 8 bits, V 4 bits); ' +
      'attention sinks (first 4 tokens of each layer in full precision, never re-quantized)';
    await expect(live.root.getByTestId('live-extensions')).toHaveText(named);
    if (workbench.host === 'browser') {
      const csv = readFileSync((await (await live.exportRun('csv')).path())!, 'utf8').trim().split('\r\n');
      expect(csv[0]).toMatch(/,kvscope_extensions,dequantize_path$/);
      expect(csv).toHaveLength(1 + 40);
      // sinks run on the host (the in-graph path does not express them), named on every row
      for (const row of csv.slice(1)) expect(row.endsWith(`,"${named.replace('kvscope extensions (beyond transformers) ', '')}",host`)).toBe(true);
    }
    await workbench.screenshotResults('stories260k-extensions');
    await workbench.history.show();
    const saved = await workbench.history.open(savedRunId);
    await expect(saved.getByTestId('saved-extensions')).toHaveText(named);
    await workbench.screenshotResults('stories260k-extensions-saved');
  });
});
