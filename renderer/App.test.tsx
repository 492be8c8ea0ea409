// @vitest-environment jsdom
import { act, cleanup, fireEvent, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { renderWorkbench } from './test-support/render-workbench.js';
import { FAKE_HUGE_FOLDER } from './test-support/fake-workbench-api.js';

vi.mock('./charts/echarts-core.js', async () => {
  const { recordingChart } = await import('./test-support/chart-mock.js');
  return { initChart: () => recordingChart() };
});

afterEach(cleanup);

describe('the workbench window', () => {
  it('opens the default synthetic model with its architecture and layer strip', async () => {
    await renderWorkbench();
    expect(screen.getByTestId('model-name').textContent).toBe('synthetic');
    expect(screen.getByTestId('model-fact-layers').textContent).toBe('8');
    expect(screen.getByTestId('model-fact-kv-heads').textContent).toBe('4');
    expect(screen.getByTestId('model-fact-head-dim').textContent).toBe('64');
    expect(screen.getByTestId('model-fact-kv-dtype').textContent).toBe('float32');
    expect(screen.getByTestId('model-fact-chat-template').textContent).toBe('none');
    const cells = screen.getAllByTestId('layer-cell');
    expect(cells.map((cell) => [cell.textContent, cell.dataset['plan'], cell.dataset['flagged']])).toEqual(Array(8).fill(['F', 'quantized', 'false']));
    expect(screen.getByTestId('preflight-status').textContent).toBe('OK: 8 of 8 layers quantized, 1 warning.'); // transformers' defaults: residual 128 against 128 new tokens never flushes
    expect(screen.queryByTestId('layer-verdict')).toBeNull();
  });

  it('flags a hybrid model before any run, with transformers\' verdict verbatim and the three choices', async () => {
    const view = await renderWorkbench();
    fireEvent.click(screen.getByTestId('open-synthetic-hybrid'));
    await view.settle();
    const verdict = screen.getByTestId('layer-verdict');
    expect(within(verdict).getByTestId('layer-verdict-message-verbatim').textContent)
      .toBe("`QuantizedCache` is only supported for models with only full attention layers. We found the following invalid layer types: {'sliding_attention'}");
    const flagged = screen.getAllByTestId('layer-cell').filter((cell) => cell.dataset['flagged'] === 'true').map((cell) => cell.textContent);
    expect(flagged).toEqual(['S', 'S', 'S', 'S']);
    expect(screen.getByTestId('preflight-status').dataset['tone']).toBe('error');

    fireEvent.click(screen.getByTestId('layer-handling-full-attention-only'));
    await view.settle();
    expect(screen.getAllByTestId('layer-cell').map((cell) => cell.dataset['plan'])).toEqual(
      ['full-precision', 'quantized', 'full-precision', 'quantized', 'full-precision', 'quantized', 'full-precision', 'quantized']);
    expect(screen.getByTestId('preflight-status').textContent).toBe('OK: 4 of 8 layers quantized, 1 warning.'); // transformers' defaults: residual 128 against 128 new tokens never flushes
    expect((screen.getByTestId('layer-policy-select') as HTMLSelectElement).value).toBe('full-attention-only');
  });

  it('explains an invalid combination inline, with transformers\' message and a fix', async () => {
    const view = await renderWorkbench();
    fireEvent.change(screen.getByTestId('nbits-select'), { target: { value: '3' } });
    await view.settle();
    expect(screen.getByTestId('preflight-status').textContent).toMatch(/^Refused before Run/);
    const refusal = screen.getByTestId('preflight-refusal');
    expect(screen.getByTestId('preflight-refusal-message-verbatim').textContent).toBe('`nbits` for `quanto` backend has to be one of [`2`, `4`] but got 3');
    expect(refusal.querySelector('.fix')).not.toBeNull();
    expect((screen.getByTestId('run-button') as HTMLButtonElement).disabled).toBe(true);
    expect(screen.getByTestId('run-blocked-reason').textContent).toContain('The run check refuses these settings');
  });

  it('checks the tokenized prompt on every edit, refuses transformers\' defaults before Run on an odd prompt, and runs after one click', async () => {
    const view = await renderWorkbench();
    fireEvent.change(screen.getByTestId('model-path-input'), { target: { value: '/fake/models/stories260k' } });
    fireEvent.click(screen.getByTestId('model-path-open'));
    await view.settle();
    // "Once upon a time": 5 tokens; quanto groups H·S·D = 4·5·8 = 160 values, which 64 does not divide
    expect(screen.getByTestId('check-prompt-tokens').textContent).toBe('5 tokens');
    expect(screen.getByTestId('check-context').textContent).toBe('5 + 128 = 133 of 512 positions');
    expect(screen.getByTestId('preflight-status').textContent).toBe('Refused before Run at prefill (5 tokens): Run stays disabled until the settings change.');
    expect(screen.getByTestId('preflight-refusal-message-verbatim').textContent).toBe('Group size (64) must be a divisor of (160)');
    expect((screen.getByTestId('run-button') as HTMLButtonElement).disabled).toBe(true);
    expect((screen.getByTestId('run-panel-run') as HTMLButtonElement).disabled).toBe(true);
    const fixes = screen.getAllByTestId('run-fix').map((button) => button.textContent);
    expect(fixes).toEqual(expect.arrayContaining(['Use q_group_size 32', 'Pad the prompt to 6 tokens']));
    // the defaults are untouched until a fix is clicked
    expect(view.store.getState().form.quantization.groupSize).toBe(64);
    fireEvent.change(screen.getByTestId('prompt-input'), { target: { value: 'Once upon a time there' } });
    await view.settle();
    expect(screen.getByTestId('check-prompt-tokens').textContent).toBe('6 tokens');
    expect(screen.getByTestId('preflight-status').textContent).toBe('OK: 5 of 5 layers quantized, 1 warning.'); // transformers' defaults: residual 128 against 128 new tokens never flushes
    fireEvent.change(screen.getByTestId('prompt-input'), { target: { value: 'Once upon a time' } });
    await view.settle();
    fireEvent.click(screen.getAllByTestId('run-fix').find((button) => button.textContent === 'Use q_group_size 32')!);
    await view.settle();
    expect(view.store.getState().form.quantization.groupSize).toBe(32);
    expect(screen.getByTestId('preflight-status').textContent).toBe('OK: 5 of 5 layers quantized, 1 warning.'); // transformers' defaults: residual 128 against 128 new tokens never flushes
    fireEvent.change(screen.getByTestId('max-new-tokens-input'), { target: { value: '8' } });
    fireEvent.click(screen.getByTestId('run-button'));
    await view.settle();
    expect(screen.getByTestId('run-status').textContent).toBe('Done');
  });

  it('browses the host\'s folders for a model in the browser, and opens one', async () => {
    const view = await renderWorkbench();
    fireEvent.click(screen.getByTestId('pick-folder'));
    await view.settle();
    expect(screen.getByTestId('folder-path').textContent).toBe('/home/researcher');
    fireEvent.click(screen.getAllByTestId('folder-place').find((place) => place.textContent === 'File system root')!);
    await view.settle();
    const enter = (name: string): void => {
      const entry = screen.getAllByTestId('folder-entry').find((item) => item.dataset['name'] === name)!;
      fireEvent.click(within(entry).getByRole('button', { name: `${name}/` }));
    };
    enter('fake');
    await view.settle();
    enter('models');
    await view.settle();
    const stories = screen.getAllByTestId('folder-entry').find((item) => item.dataset['name'] === 'stories260k')!;
    expect(stories.dataset['kind']).toBe('model');
    fireEvent.click(within(stories).getByTestId('folder-entry-open'));
    await view.settle();
    expect(screen.queryByTestId('folder-browser')).toBeNull();
    expect(screen.getByTestId('model-name').textContent).toBe('stories260k');
    // Esc closes the browser without stopping anything
    fireEvent.click(screen.getByTestId('pick-folder'));
    await view.settle();
    fireEvent.keyDown(screen.getByTestId('folder-browser'), { key: 'Escape' });
    expect(screen.queryByTestId('folder-browser')).toBeNull();
  });

  it('lists a huge folder a page at a time, saying how far it got (issue 24: 10,000 graphs in a folder)', async () => {
    const view = await renderWorkbench();
    fireEvent.click(screen.getByTestId('pick-folder'));
    await view.settle();
    await act(async () => view.controller.browseFolder(FAKE_HUGE_FOLDER));
    await view.settle();
    expect(screen.getAllByTestId('folder-entry')).toHaveLength(2000);
    expect(screen.getByTestId('folder-progress').textContent).toBe('Listed 2,000 of 2,500 entries. List more');
    fireEvent.click(screen.getByTestId('folder-more'));
    await view.settle();
    const names = screen.getAllByTestId('folder-entry').map((entry) => entry.dataset['name']);
    expect(names).toHaveLength(2500);
    expect(names.at(-1)).toBe('model_2500.onnx');
    expect(new Set(names).size).toBe(2500);
    // all listed: no progress line, nothing more to ask for
    expect(screen.queryByTestId('folder-progress')).toBeNull();
    expect(screen.queryByTestId('folder-more')).toBeNull();
  });

  it('estimates the cache at a chosen context length', async () => {
    const view = await renderWorkbench();
    fireEvent.change(screen.getByTestId('whatif-context-input'), { target: { value: '1024' } });
    await view.settle();
    // 8 layers × 493,568 B (see app/accounting/memory-what-if.test.ts) against 8 MiB of fp16
    expect(screen.getByTestId('whatif-total').textContent).toBe('3.77 MiB');
    expect(screen.getByTestId('whatif-baseline').textContent).toBe('8.00 MiB');
    expect(screen.getByTestId('whatif-baseline-dtype').textContent).toBe('16.0 MiB');
    expect(screen.getByTestId('whatif-ratio').textContent).toBe('Stored is 4.25× smaller than the fp32 dynamic cache it replaces, and 2.12× smaller than an fp16 one.');
    // it argues back rather than printing a number for a question without one
    fireEvent.change(screen.getByTestId('whatif-context-input'), { target: { value: '-4' } });
    await view.settle();
    expect(screen.getByTestId('whatif-problem').textContent).toBe('Context length must be a whole number of tokens, at least 1; it is -4.');
    expect(screen.queryByTestId('whatif-total')).toBeNull();
    fireEvent.change(screen.getByTestId('whatif-context-input'), { target: { value: '16' } });
    await view.settle();
    expect(screen.getByTestId('whatif-problem').textContent).toContain('The prompt (32 tokens) is longer than the context (16 tokens)');
    fireEvent.change(screen.getByTestId('whatif-context-input'), { target: { value: '100000' } });
    await view.settle();
    expect(screen.getByTestId('whatif-warning').textContent).toContain('max_position_embeddings');
    fireEvent.change(screen.getByTestId('group-size-input'), { target: { value: '3' } });
    await view.settle();
    expect(screen.getByTestId('whatif-problem').textContent).toMatch(/^These settings are refused at prefill \(32 tokens\).*Group size \(3\) must be a divisor/);
    expect(screen.queryByTestId('whatif-total')).toBeNull();
  });

  it('shows a bad folder path as an error with what to do, and keeps working', async () => {
    const view = await renderWorkbench();
    fireEvent.change(screen.getByTestId('model-path-input'), { target: { value: '/no/such/model' } });
    fireEvent.click(screen.getByTestId('model-path-open'));
    await view.settle();
    const error = screen.getByTestId('model-error');
    expect(error.textContent).toContain('the model path /no/such/model does not exist.');
    expect(error.textContent).toContain('What to do:');
    expect((screen.getByTestId('run-button') as HTMLButtonElement).disabled).toBe(true);
    fireEvent.click(screen.getByTestId('open-synthetic'));
    await view.settle();
    expect((screen.getByTestId('run-button') as HTMLButtonElement).disabled).toBe(false);
  });

  it('offers the chat format only for a model with a chat template, and runs with it', async () => {
    const view = await renderWorkbench();
    const toggle = (): HTMLInputElement => screen.getByTestId('chat-format-toggle') as HTMLInputElement;
    expect(toggle().disabled).toBe(true);
    expect(screen.getByTestId('chat-format-hint').textContent).toBe('(this model has no chat template)');
    fireEvent.change(screen.getByTestId('model-path-input'), { target: { value: '/fake/models/llama-3.2-1b-instruct' } });
    fireEvent.click(screen.getByTestId('model-path-open'));
    await view.settle();
    expect(toggle().disabled).toBe(false);
    expect(screen.getByTestId('model-fact-chat-template').textContent).toBe('yes');
    expect(screen.getByTestId('chat-format-hint').textContent).toBe("(the model's chat template, from tokenizer_config.json)");
    fireEvent.click(toggle());
    fireEvent.change(screen.getByTestId('max-new-tokens-input'), { target: { value: '4' } });
    fireEvent.click(screen.getByTestId('run-button'));
    await view.settle(4);
    expect(screen.getByTestId('live-settings').textContent).toContain('chat turn · 4 new tokens');
    // Back on a model without a template the box shows unchecked, and runs use the plain text.
    fireEvent.click(screen.getByTestId('open-synthetic'));
    await view.settle();
    expect(toggle().checked).toBe(false);
  });

  // Esc in the page; Ctrl+. is also the Electron menu's Stop accelerator.
  it.each([
    ['Esc', { key: 'Escape' }],
    ['Ctrl+.', { key: '.', ctrlKey: true }],
  ])('runs on Ctrl+Enter, stops on %s, and the run ends as cancelled', async (_chord, stop) => {
    const view = await renderWorkbench();
    fireEvent.change(screen.getByTestId('max-new-tokens-input'), { target: { value: '500' } });
    fireEvent.keyDown(window, { key: 'Enter', ctrlKey: true });
    await view.settle(4);
    expect(screen.getByTestId('run-status').textContent).toBe('Generating…');
    fireEvent.keyDown(window, stop);
    await view.settle();
    expect(screen.getByTestId('run-status').textContent).toBe('Cancelled');
    expect(screen.getByTestId('result-summary').textContent).toContain('cancelled');
  });

  it('refuses a run before it starts and runs again after a change', async () => {
    const view = await renderWorkbench();
    fireEvent.click(screen.getByTestId('open-synthetic-hybrid'));
    await view.settle();
    expect((screen.getByTestId('run-button') as HTMLButtonElement).disabled).toBe(true);
    // the shortcut does not get around the check: the refusal comes as a notice, and no run starts
    fireEvent.keyDown(window, { key: 'Enter', ctrlKey: true });
    await view.settle();
    expect(screen.getByTestId('notice-title').textContent).toBe('This run is refused');
    expect(screen.getByTestId('notice-error-code').textContent).toBe('refused');
    expect(screen.getByTestId('notice-error-message').textContent).toContain('`QuantizedCache` is only supported for models with only full attention layers.');
    expect(screen.queryByTestId('run-dashboard')).toBeNull();
    fireEvent.click(screen.getByTestId('layer-handling-dynamic'));
    fireEvent.change(screen.getByTestId('max-new-tokens-input'), { target: { value: '10' } });
    await view.settle(); // the check of the new settings
    fireEvent.click(screen.getByTestId('run-button'));
    await view.settle();
    expect(screen.getByTestId('run-status').textContent).toBe('Done');
    expect(screen.getByTestId('chart-empty-error-latest').textContent).toContain('Dynamic cache');
  });
});

describe('streaming goes around React', () => {
  it('changes no store state per metrics batch, while charts and figures follow on animation frames', async () => {
    const view = await renderWorkbench({ stepsPerBatch: 4 });
    const { createdCharts } = await import('./test-support/chart-mock.js');
    fireEvent.change(screen.getByTestId('max-new-tokens-input'), { target: { value: '400' } });
    fireEvent.click(screen.getByTestId('run-button'));
    await view.settle(3); // the ticket and the first batches: the dashboard mounts
    await act(async () => {
      await import('./charts/load-echarts.js').then((m) => m.loadEcharts());
    });
    view.frame();

    let notifications = 0;
    const unsubscribe = view.store.subscribe(() => notifications++);
    const memoryChart = createdCharts.filter((chart) => !chart.disposed)[0]!;
    const optionsBefore = memoryChart.options.length;
    await view.settle(60); // 60 more batches of 4 steps
    unsubscribe();
    expect(notifications).toBe(0);

    view.frame(3);
    expect(memoryChart.options.length).toBeGreaterThan(optionsBefore);
    expect(Number(screen.getByTestId('stat-steps').textContent)).toBeGreaterThan(200);
    expect(Number(screen.getByTestId('chart-kv-memory').dataset['points'])).toBeGreaterThan(200);
  });
});
