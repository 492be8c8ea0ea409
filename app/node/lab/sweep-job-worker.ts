import { launchProcess } from '../worker/process-launch.js';
import type { WorkerLauncher } from '../worker/worker-transport.js';
import { LabWorker, type LabWorkerOptions } from './lab-worker-client.js';

/**
 * The worker of one of a sweep's `jobs` (app/lab/sweep-run.ts startWorker), for `kvscope sweep` and
 * the Lab's sweeps alike.
 *
 * With several jobs, each is a process of its own (`processLauncher`: Node's fork on the CLI and in
 * serve, Electron's utilityProcess in the workbench). The jobs' sessions read the model's external
 * data in place (ort-decoder-session.ts SessionSharing), so they share its page-cache pages either
 * way; but Linux counts a mapped file page in RSS once per mapping, and every session maps the file,
 * so N jobs as threads of one process read N copies of the weights in that process's max RSS (1.84×
 * a plain loop on synthetic-qwen2.5-0.5b). As processes, each holds one mapping: the weights once per
 * process (issue 23). One job stays a thread (no second mapping to avoid, and no process to start),
 * as do `kvscope eval` and the generation worker.
 *
 * A process is given a cancel deadline even where the host's threads have none (the CLI passes
 * `cancelTimeoutMs: null`, because terminating a thread whose session.run is in flight aborts the
 * whole process natively): killing a process mid-run harms nothing, and a cancelled point records
 * nothing anyway, so a job that has not reached its next window within the deadline (10 s, or four
 * of its slowest windows) is killed and the sweep ends sooner.
 */
export function sweepJobWorker(options: LabWorkerOptions, jobs: number, processLauncher: WorkerLauncher = launchProcess): LabWorker {
  if (jobs <= 1) return new LabWorker(options);
  const { cancelTimeoutMs, ...rest } = options;
  return new LabWorker({ ...rest, launcher: processLauncher, ...(cancelTimeoutMs === null || cancelTimeoutMs === undefined ? {} : { cancelTimeoutMs }) });
}
