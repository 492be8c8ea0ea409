import { useState, type ReactNode, useRef } from 'react';
import { useFrameTask } from '../../metrics/use-frame-task.js';
import { useWorkbench } from '../../services.js';
import { ErrorDetails } from '../common/ErrorDetails.js';

const PERFORMANCE_KEY = 'kvscope.performanceMode';

/** Performance mode: on with `?perf` in the URL, or as last chosen here (kept in localStorage). */
function initialPerformanceMode(): boolean {
  if (typeof location !== 'undefined' && new URLSearchParams(location.search).has('perf')) return true;
  try {
    return typeof localStorage !== 'undefined' && localStorage.getItem(PERFORMANCE_KEY) === 'on';
  } catch {
    return false;
  }
}

/**
 * Versions and platform; in performance mode also the UI's frame rate (measured from the
 * animation-frame loop, once a second), which only someone checking the workbench itself needs.
 */
export function StatusBar(): ReactNode {
  const { environment, environmentError, host } = useWorkbench((s) => ({ environment: s.environment, environmentError: s.environmentError, host: s.host }));
  const [performance, setPerformance] = useState(initialPerformanceMode);
  const toggle = (): void => {
    const next = !performance;
    setPerformance(next);
    try {
      localStorage.setItem(PERFORMANCE_KEY, next ? 'on' : 'off');
    } catch {
      // private windows may refuse storage: the mode then lasts for this page only
    }
  };
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
      <span className="status-right">
        {performance && <FpsMeter />}
        <button type="button" className="link-button performance-toggle" aria-pressed={performance} onClick={toggle} data-testid="performance-mode"
          title="Performance mode shows the UI's frame rate">
          {performance ? 'performance mode on' : 'performance mode'}
        </button>
      </span>
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
