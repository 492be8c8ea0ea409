import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import type { WorkbenchApi } from '../app/protocol/workbench-api.js';
import { getWorkbenchApi } from './api/index.js';
import { App } from './App.js';
import { warmChartsWhenIdle } from './charts/warm-charts.js';
import { FatalError } from './components/layout/FatalError.js';
import { WorkbenchController } from './controller/workbench-controller.js';
import { FrameLoop } from './metrics/frame-loop.js';
import { createWorkbenchStore } from './store/workbench-store.js';
import './styles/app.css';

/**
 * The renderer's entry (Electron and serve mode alike). A test build (`vite build --mode fake`)
 * also accepts `?fake` in the URL and then talks to the deterministic fake engine of
 * renderer/test-support; in every other build `import.meta.env.MODE === 'fake'` is constant false,
 * so the bundler drops that branch and the fake with it.
 */
async function resolveApi(): Promise<WorkbenchApi> {
  if (import.meta.env.MODE === 'fake' && new URLSearchParams(location.search).has('fake')) {
    const { createFakeApiFromUrl } = await import('./test-support/fake-from-url.js');
    return createFakeApiFromUrl(location.search);
  }
  return getWorkbenchApi();
}

async function boot(): Promise<void> {
  const element = document.getElementById('root');
  if (element === null) throw new Error('index.html has no #root element');
  const root = createRoot(element);
  let api: WorkbenchApi;
  try {
    api = await resolveApi();
  } catch (error) {
    root.render(<FatalError error={error} />);
    return;
  }
  const store = createWorkbenchStore(api.host);
  const controller = new WorkbenchController(api, store);
  const frames = new FrameLoop();
  root.render(
    <StrictMode>
      <App services={{ store, controller, frames }} />
    </StrictMode>,
  );
  warmChartsWhenIdle();
  await controller.start();
}

void boot();
