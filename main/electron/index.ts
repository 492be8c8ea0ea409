import { disableOrtTelemetry } from '../../app/node/worker/ort-telemetry.js';
import { startWorkbenchApp } from './workbench-app.js';

// Entry of the Electron main process (electron-vite builds it to out/main/index.js). ESM: the
// bundle's own directory comes from import.meta.dirname, never a declared __dirname (electron-vite
// injects one; declaring another breaks the build, toolchain.md §5).
// Before any onnxruntime session (models are inspected on this thread): see ort-telemetry.ts.
disableOrtTelemetry();
startWorkbenchApp({ mainDir: import.meta.dirname });
