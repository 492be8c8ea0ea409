import { describe, expect, it, vi } from 'vitest';
import type { LabSweepRequest, LabSweepTicket } from '../../../app/lab/lab-api.js';
import type { WorkbenchApi } from '../../../app/protocol/workbench-api.js';
import { toRunSettings } from '../../store/settings-slice.js';
import { createWorkbenchStore } from '../../store/workbench-store.js';
import { LabController } from './lab-controller.js';

/** A Lab whose start answers when the test says so, as a host reading a model does. */
function pendingLab() {
  let answer!: (ticket: LabSweepTicket) => void;
  const requests: LabSweepRequest[] = [];
  const lab = {
    startSweep: vi.fn((request: LabSweepRequest) => {
      requests.push(request);
      return new Promise<LabSweepTicket>((resolve) => { answer = resolve; });
    }),
    cancelSweep: vi.fn(async () => undefined),
    listSweeps: vi.fn(async () => []),
  };
  return { lab, requests, answer: (ticket: LabSweepTicket) => answer(ticket) };
}

describe('the Lab controller', () => {
  it('sends the Run panel\'s settings typed, and a Stop clicked before the host answers goes out with the sweep\'s id', async () => {
    const store = createWorkbenchStore('browser');
    store.getState().modelLoading({ kind: 'synthetic' });
    store.getState().updateLabVary('nbits', '2, 4');
    const { lab, requests, answer } = pendingLab();
    const controller = new LabController({ lab } as unknown as WorkbenchApi, store, () => undefined);
    const starting = controller.start();
    expect(store.getState().lab.sweep.status).toBe('starting');
    const request = requests[0]!;
    expect(request.kind).toBe('new');
    if (request.kind !== 'new') return;
    // the settings a run of the panel would send, not eval's flags
    expect(request.settings.run).toEqual(toRunSettings(store.getState().form, 'synthetic', null));
    expect(request.settings.vary.nbits).toEqual([2, 4]);
    await controller.stop();
    expect(store.getState().lab.sweep.status).toBe('stopping');
    expect(lab.cancelSweep).not.toHaveBeenCalled();
    answer({ sweepId: 's1', points: 2, complete: 0 });
    await starting;
    expect(lab.cancelSweep).toHaveBeenCalledWith('s1');
    expect(store.getState().lab.sweep).toMatchObject({ sweepId: 's1', status: 'stopping' });
  });

  it('a sweep not stopped runs on when the host answers', async () => {
    const store = createWorkbenchStore('browser');
    store.getState().modelLoading({ kind: 'synthetic' });
    const { lab, answer } = pendingLab();
    const controller = new LabController({ lab } as unknown as WorkbenchApi, store, () => undefined);
    const starting = controller.start();
    answer({ sweepId: 's2', points: 1, complete: 0 });
    await starting;
    expect(lab.cancelSweep).not.toHaveBeenCalled();
    expect(store.getState().lab.sweep).toMatchObject({ sweepId: 's2', status: 'running' });
  });
});
