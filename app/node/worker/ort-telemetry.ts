/**
 * onnxruntime-node 1.30 on Linux carries Microsoft's 1DS telemetry client (core/platform/posix/
 * telemetry.cc). When ORT's environment is created (the first session of the process) it derives an
 * app id from /proc/self/cmdline with a std::regex (`(.*)[ ]*.*[…]`) whose backtracking recurses
 * about twice per byte of the command line. On a worker thread's stack (Node gives workers 4 MB) a
 * command line of ≈15 KB overflows it: `kvscope run --prompt <15 KB>` died with SIGSEGV (exit 139)
 * as soon as the worker created its session; the main thread's 8 MB stack lasts to ≈40 KB.
 * Reproduced with nothing but a worker creating an InferenceSession under a long argv (and not with
 * a long environment, nor with newlines in the argument, which `.` does not match); ORT skips the
 * client entirely when ORT_DISABLE_TELEMETRY is set, and then argv of any length works.
 *
 * kvscope never sends telemetry anyway (no network at run time), so every host sets the variable in
 * the real process environment before any session exists: the worker threads share that environment
 * (their own `process.env` is only a copy, so it must be set from the main thread). A user who sets
 * the variable themselves keeps their value.
 */
export const ORT_TELEMETRY_VARIABLE = 'ORT_DISABLE_TELEMETRY';

export function disableOrtTelemetry(env: NodeJS.ProcessEnv = process.env): void {
  if (env[ORT_TELEMETRY_VARIABLE] === undefined || env[ORT_TELEMETRY_VARIABLE] === '') env[ORT_TELEMETRY_VARIABLE] = '1';
}
