import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseRunRecord } from '../app/record/parse-run-record.js';
import { STORIES_DIR } from './environment.js';
import { expect, test } from './fixtures.js';

test.describe('where the cache is dequantized (run panel)', () => {
  test('stories260k on both paths: the saved record says which ran, the tokens are the same, the process-memory chart fills', async ({ openWorkbench }) => {
    const workbench = await openWorkbench();
    const { model, run, live } = workbench;
    await model.openFolder(STORIES_DIR);
    await expect(model.name).toHaveText('stories260k');
    await run.setCache({ backend: 'quanto', nbits: 4, groupSize: 32, residualLength: 16, layerPolicy: 'all' });
    await run.setMaxNewTokens(48);
    await run.setReference(false);
    const records = [];
    for (const path of ['host', 'graph'] as const) {
      await run.setDequantize(path);
      await run.run();
      expect(await live.waitForEnd()).toBe('Done');
      await expect.poll(() => live.chartPoints('process-memory')).toBeGreaterThan(10);
      const id = (await live.savedRunId.textContent())!;
      records.push(parseRunRecord(readFileSync(join(workbench.dataDir!, 'runs', `${id}.json`), 'utf8'), `${id}.json`));
    }
    const [host, graph] = records;
    expect(host!.settings.dequantize).toBe('host');
    expect(host!.dequantize).toBe('host');
    expect(graph!.dequantize).toBe('graph');
    expect(graph!.generatedTokenIds).toEqual(host!.generatedTokenIds);
    expect(graph!.flushCounts).toEqual(host!.flushCounts);
    expect(graph!.diagnostics.some((d) => d.code === 'dequantize-path')).toBe(true);
    await workbench.screenshotResults('in-graph-process-memory');
  });
});
