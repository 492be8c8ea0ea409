import { useRef, type ReactNode } from 'react';
import { useFrameTask } from '../../metrics/use-frame-task.js';
import { useWorkbench } from '../../services.js';
import { ErrorDetails } from '../common/ErrorDetails.js';

/** Versions, platform, and the UI's frame rate (measured from the animation-frame loop, once a second). */
export function StatusBar(): ReactNode {
  const { environment, environmentError, host } = useWorkbench((s) => ({ environment: s.environment, environmentError: s.environmentError, host: s.host }));
  return (
    <footer className="status-bar" role="contentinfo">
      {environmentError !== null ? (
        <details className="status-error" data-testid="environment-error">
          <summary>Engine unreachable</summary>
          <ErrorDetails error={environmentError} testId="environment-error-details" />
        </details>
      ) : (
        <span data-testid="environment">
          {environment === null ? 'Connecting…' : `kvscope ${environment.kvscopeVersion} · onnxruntime ${environment.ortVersion} · ${environment.platform} · ${host === 'electron' ? 'desktop' : 'browser (serve mode)'}`}
        </span>
      )}
      <FpsMeter />
    </footer>
  );
}

function FpsMeter(): ReactNode {
  const label = useRef<HTMLSpanElement>(null);
  const window = useRef({ start: -1, frames: 0 });
  useFrameTask((now) => {
    const w = window.current;
    if (w.start < 0) w.start = now;
    w.frames++;
    const elapsed = now - w.start;
    if (elapsed >= 1000) {
      const fps = (1000 * (w.frames - 1)) / elapsed;
      if (label.current !== null) {
        label.current.textContent = `${fps.toFixed(0)} fps`;
        label.current.dataset['fps'] = fps.toFixed(1);
      }
      w.start = now;
      w.frames = 1;
    }
    return false;
  }, []);
  return <span className="fps muted" ref={label} title="UI frames per second" data-testid="fps">– fps</span>;
}
