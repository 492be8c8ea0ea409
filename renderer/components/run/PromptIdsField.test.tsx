// @vitest-environment jsdom
import { cleanup, fireEvent, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_RUN_FORM, promptIdsFieldProblem, promptTakesIds, toRunSettings } from '../../store/settings-slice.js';
import { renderWorkbench } from '../../test-support/render-workbench.js';

vi.mock('../../charts/echarts-core.js', async () => {
  const { recordingChart } = await import('../../test-support/chart-mock.js');
  return { initChart: () => recordingChart() };
});

afterEach(cleanup);

describe('prompt ids in the run form', () => {
  const noTokenizer = { hasTokenizer: false, vocabSize: 1000 };
  const withTokenizer = { hasTokenizer: true, vocabSize: 512 };

  it('are the prompt of a model without a tokenizer, and an alternative to text otherwise', () => {
    expect(promptTakesIds(DEFAULT_RUN_FORM, noTokenizer)).toBe(true);
    expect(promptTakesIds(DEFAULT_RUN_FORM, withTokenizer)).toBe(false);
    expect(promptTakesIds({ promptInput: 'ids' }, withTokenizer)).toBe(true);
    expect(promptTakesIds(DEFAULT_RUN_FORM, null)).toBe(false);
  });

  it('are checked as typed: a list of ids, within the vocabulary', () => {
    const form = (promptIds: string) => ({ promptInput: 'ids' as const, promptIds });
    expect(promptIdsFieldProblem(form('5, 6, 7'), noTokenizer)).toBeNull();
    expect(promptIdsFieldProblem(form('5, x'), noTokenizer)?.message).toMatch(/^the prompt ids must be token ids/);
    expect(promptIdsFieldProblem(form('5 1000'), noTokenizer)?.message).toBe('prompt ids 1000 are not token ids of this model (its logits have 1000 entries).');
    expect(promptIdsFieldProblem(form(''), noTokenizer)?.message).toBe('the prompt ids are empty.');
    expect(promptIdsFieldProblem({ promptInput: 'text', promptIds: 'x' }, withTokenizer)).toBeNull();
  });

  it('travel as RunSettings.promptTokenIds, the text left out and no chat turn', () => {
    const form = { ...DEFAULT_RUN_FORM, promptIds: '[5, 6, 7]', promptFormat: 'chat' as const };
    const settings = toRunSettings(form, '/m', null, true, true);
    expect(settings).toMatchObject({ prompt: '', promptTokenIds: [5, 6, 7] });
    expect(settings).not.toHaveProperty('promptFormat');
    expect(toRunSettings(form, '/m', null, true, false)).toMatchObject({ prompt: 'Once upon a time', promptFormat: 'chat' });
    expect(toRunSettings(form, '/m', null, true, false)).not.toHaveProperty('promptTokenIds');
  });
});

describe('the run panel on a folder without a tokenizer', () => {
  it('takes the prompt as ids, refuses what is not ids, checks the ids the run feeds, runs and shows ids', async () => {
    const view = await renderWorkbench();
    fireEvent.change(screen.getByTestId('model-path-input'), { target: { value: '/fake/models/lfm2-hybrid-stub' } });
    fireEvent.click(screen.getByTestId('model-path-open'));
    await view.settle();
    expect(screen.queryByTestId('prompt-input')).toBeNull();
    expect(screen.queryByTestId('prompt-as-text')).toBeNull(); // no tokenizer: text is no choice
    expect(screen.getByTestId('prompt-ids-hint').textContent).toBe(
      'This model has no tokenizer.json, so the prompt is given as token ids, each from 0 to 999, separated by commas or spaces. The generated text is shown as ids.');
    expect(screen.getByTestId('run-blocked-reason').textContent).toContain('The prompt ids cannot run');
    expect(screen.getByTestId('preflight-refusal').textContent).toContain('the prompt ids are empty.');

    fireEvent.change(screen.getByTestId('prompt-ids-input'), { target: { value: '5, 6, x' } });
    await view.settle();
    expect(screen.getByTestId('prompt-ids-problem').textContent).toMatch(/^The prompt ids must be token ids/);
    expect(screen.getByTestId('preflight-status').textContent).toMatch(/^Not checked: The prompt ids must be token ids/);
    expect((screen.getByTestId('run-panel-run') as HTMLButtonElement).disabled).toBe(true);
    fireEvent.change(screen.getByTestId('prompt-ids-input'), { target: { value: '5, 6, 1200' } });
    await view.settle();
    expect(screen.getByTestId('prompt-ids-problem').textContent).toBe('Prompt ids 1200 are not token ids of this model (its logits have 1000 entries).');
    // the host's check refuses them too, in the run's words, with the range
    expect(screen.getByTestId('preflight-status').textContent).toMatch(/^Refused before Run/);
    expect(screen.getByTestId('preflight-refusal').textContent).toContain('prompt ids 1200 are not token ids of this model (its logits have 1000 entries).');
    expect(screen.getByTestId('preflight-refusal').textContent).toContain('Give at least one id, each from 0 to 999.');

    fireEvent.change(screen.getByTestId('prompt-ids-input'), { target: { value: '5 6 7 8' } });
    fireEvent.click(screen.getByTestId('layer-handling-full-attention-only'));
    fireEvent.change(screen.getByTestId('max-new-tokens-input'), { target: { value: '6' } });
    await view.settle();
    expect(screen.queryByTestId('prompt-ids-problem')).toBeNull();
    expect(screen.getByTestId('check-prompt-tokens').textContent).toBe('4 tokens');
    expect(screen.getByTestId('preflight-status').textContent).toMatch(/^OK/);
    // 3 ids: H·S·D = 4·3·8 = 96 values, which quanto's default group of 64 does not divide
    fireEvent.change(screen.getByTestId('prompt-ids-input'), { target: { value: '5 6 7' } });
    await view.settle();
    expect(screen.getByTestId('check-prompt-tokens').textContent).toBe('3 tokens');
    expect(screen.getByTestId('preflight-refusal-message-verbatim').textContent).toBe('Group size (64) must be a divisor of (96)');
    fireEvent.change(screen.getByTestId('prompt-ids-input'), { target: { value: '5 6 7 8' } });
    await view.settle();

    fireEvent.click(screen.getByTestId('run-panel-run'));
    await view.settle();
    expect(screen.getByTestId('run-status').textContent).toBe('Done');
    const run = view.store.getState().run;
    expect(run.settings).toMatchObject({ prompt: '', promptTokenIds: [5, 6, 7, 8] });
    expect(run.result!.promptTokenIds).toEqual([5, 6, 7, 8]);
    expect(screen.getByTestId('text-prompt-ids').textContent).toBe('Prompt (token ids): 5 6 7 8');
    view.frame(2);
    expect(screen.getByTestId('generated-text').textContent).toBe(run.result!.generatedTokenIds.join(' '));
  });

  it('offers ids in place of text on a model with a tokenizer, and back', async () => {
    const view = await renderWorkbench();
    fireEvent.click(screen.getByTestId('prompt-as-ids'));
    await view.settle();
    expect(screen.getByTestId('prompt-ids-hint').textContent).toMatch(/^Fed as they are \(no BOS added\), each from 0 to /);
    fireEvent.change(screen.getByTestId('prompt-ids-input'), { target: { value: '1, 2, 3, 4' } });
    await view.settle();
    expect(screen.getByTestId('check-prompt-tokens').textContent).toBe('4 tokens');
    fireEvent.click(screen.getByTestId('prompt-as-text'));
    await view.settle();
    expect((screen.getByTestId('prompt-input') as HTMLTextAreaElement).value).toBe('Once upon a time');
  });
});
