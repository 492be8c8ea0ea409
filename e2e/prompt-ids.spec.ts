import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseRunRecord } from '../app/record/parse-run-record.js';
import { ORT_GENAI_TINY_DIR } from './environment.js';
import { expect, test } from './fixtures.js';

/**
 * Issue 11's "a folder with no tokenizer runs with the dynamic and the quantized cache", in the
 * workbench: ../shared/models/ort-genai-tiny/lfm2-hybrid-stub has no tokenizer.json (1000 ids; conv
 * layers 0 and 2, attention 1 and 3, so transformers' policy refuses it and `full-attention-only` runs it).
 */
test.describe('prompt ids for a folder without a tokenizer (real engine)', () => {
  test('the run panel takes ids, checks them against the vocabulary as typed, runs both caches and shows ids', async ({ openWorkbench }) => {
    const workbench = await openWorkbench();
    const { model, run, live, history } = workbench;
    await model.openFolder(join(ORT_GENAI_TINY_DIR, 'lfm2-hybrid-stub'));
    await expect(model.name).toHaveText('lfm2-hybrid-stub');
    await expect(run.promptIds).toBeVisible();
    await expect(run.root.getByTestId('prompt-input')).toHaveCount(0);
    await expect(run.root.getByTestId('prompt-ids-hint')).toContainText('no tokenizer.json, so the prompt is given as token ids, each from 0 to 999');
    await expect(run.runButton).toBeDisabled();

    await run.setPromptIds('5, 6, x');
    await expect(run.promptIdsProblem).toHaveText(/^The prompt ids must be token ids/);
    await expect(run.runButton).toBeDisabled();
    await run.setPromptIds('5, 6, 1200');
    await expect(run.promptIdsProblem).toHaveText('Prompt ids 1200 are not token ids of this model (its logits have 1000 entries).');
    await expect(run.refusal).toContainText('Give at least one id, each from 0 to 999.'); // the host's check says it too
    await expect(run.runButton).toBeDisabled();

    await run.setPromptIds('5 6 7 8');
    await model.chooseHandling('full-attention-only');
    await run.setMaxNewTokens(6);
    await expect(run.promptIdsProblem).toHaveCount(0);
    await expect(run.check('prompt-tokens')).toHaveText('4 tokens');
    await expect(run.preflightStatus).toHaveText(/^OK/);
    await run.run();
    expect(await live.waitForEnd()).toBe('Done');
    await expect(live.root.getByTestId('text-prompt-ids')).toHaveText('Prompt (token ids): 5 6 7 8');
    await expect(live.text).toHaveText(/^\d+( \d+){5}$/);
    const quantizedId = (await live.savedRunId.textContent())!;
    const record = parseRunRecord(readFileSync(join(workbench.dataDir!, 'runs', `${quantizedId}.json`), 'utf8'), `${quantizedId}.json`);
    expect(record.settings.promptTokenIds).toEqual([5, 6, 7, 8]);
    expect(record.promptTokenIds).toEqual([5, 6, 7, 8]);
    expect(record.settings.quantization.layerPolicy).toBe('full-attention-only');
    expect(record.flushCounts).toEqual([null, 0, null, 0]);
    await expect(live.text).toHaveText(record.generatedTokenIds.join(' '));
    await workbench.screenshot('prompt-ids-quantized');

    await run.setCacheMode('dynamic');
    await expect(run.preflightStatus).toHaveText(/^OK/);
    await run.run();
    expect(await live.waitForEnd()).toBe('Done');
    const dynamicId = (await live.savedRunId.textContent())!;
    expect(dynamicId).not.toBe(quantizedId);
    const dynamic = parseRunRecord(readFileSync(join(workbench.dataDir!, 'runs', `${dynamicId}.json`), 'utf8'), `${dynamicId}.json`);
    expect(dynamic.promptTokenIds).toEqual([5, 6, 7, 8]);
    expect(dynamic.generatedTokenIds).toHaveLength(6);

    await history.show();
    const saved = await history.open(quantizedId);
    await expect(saved.getByTestId('text-prompt-ids')).toHaveText('Prompt (token ids): 5 6 7 8');
    await expect(saved.getByTestId('generated-text')).toHaveText(record.generatedTokenIds.join(' '));
  });
});
