import type { WorkbenchApi } from '../../app/protocol/workbench-api.js';
import { createFakeWorkbenchApi, type FakeWorkbenchApi } from './fake-workbench-api.js';

declare global {
  interface Window {
    /** the fake engine of a test build, for e2e tests that emit menu commands */
    __kvscopeFake?: FakeWorkbenchApi;
  }
}

/**
 * The fake API configured from the URL of a test build: `?fake&host=electron&interval=40&batch=4`
 * (`interval`: ms between metrics batches; `batch`: steps per batch; `webgpu=adapter`: a machine with a
 * WebGPU adapter, which the fake machine otherwise lacks, as the build machines do; `unwritable`: a data
 * folder that cannot be written, so finished runs are kept for the session instead of saved).
 */
export function createFakeApiFromUrl(search: string): WorkbenchApi {
  const params = new URLSearchParams(search);
  const number = (name: string, fallback: number): number => {
    const value = Number(params.get(name));
    return params.has(name) && Number.isFinite(value) && value > 0 ? value : fallback;
  };
  const host = params.get('host') === 'electron' ? 'electron' : 'browser';
  const api = createFakeWorkbenchApi({
    host,
    batchIntervalMs: number('interval', 40),
    stepsPerBatch: number('batch', 4),
    pickedFolder: params.get('picked'),
    webgpuAdapter: params.get('webgpu') === 'adapter',
    unwritableDataFolder: params.has('unwritable'),
  });
  window.__kvscopeFake = api;
  return api;
}
