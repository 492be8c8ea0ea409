import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../../cache/cache-config.js';
import { defaultWindowSettings } from '../../../lab/eval-settings.js';
import { launchProcess } from '../../worker/process-launch.js';
import { LabWorker } from '../lab-worker-client.js';

/**
 * A host of one lab worker process (lab-worker-process.test.ts), run as its own Node process:
 * - `orphan`: prints the worker's pid, then runs a long job (the test kills this host meanwhile);
 * - `dispose`: runs a job, disposes the worker, and ends by itself (nothing of the worker keeps it alive).
 */
const mode = process.argv[2];
const worker = new LabWorker({ engineModule: new URL('../../../../workers/test-support/fake-lab-engine.ts', import.meta.url).href, launcher: launchProcess });
const settings = (name: string) => ({
  model: '/models/fake', executionProvider: 'cpu' as const, cacheMode: 'dynamic' as const, quantization: DEFAULT_QUANTIZED_CACHE_SETTINGS,
  text: { name, content: 'fake' }, windows: { ...defaultWindowSettings(), maxWindows: 3 },
});
if (mode === 'orphan') {
  const reference = await worker.reference(settings('pid'), {}).done;
  process.stdout.write(`${reference.key}\n`);
  await worker.reference(settings('windows-60000'), {}).done;
} else {
  const reference = await worker.reference(settings('pid'), {}).done;
  await worker.dispose();
  process.stdout.write(`${reference.key}\n`);
}
