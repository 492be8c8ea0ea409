import { useRef, type KeyboardEvent, type ReactNode } from 'react';
import { useServices, useWorkbench } from '../../services.js';
import type { MainView } from '../../store/history-slice.js';
import { CompareView } from '../compare/CompareView.js';
import { HistoryView } from '../history/HistoryView.js';
import { SavedRunView } from '../history/SavedRunView.js';
import { LiveView } from '../live/LiveView.js';
import { LabView } from '../lab/LabView.js';

/** The results area: live run, a saved run, a comparison, the history; tabs with arrow-key navigation. */
export function Workspace(): ReactNode {
  const { store } = useServices();
  const { view, savedId, compareOpen, runCount } = useWorkbench((s) => ({
    view: s.view, savedId: s.savedRun.runId, compareOpen: s.compare.status !== 'idle', runCount: s.history.runs.length,
  }));
  const tabs: { id: MainView; label: string }[] = [
    { id: 'live', label: 'Live run' },
    ...(savedId !== null ? [{ id: 'saved' as const, label: `Saved run` }] : []),
    ...(compareOpen ? [{ id: 'compare' as const, label: 'Compare' }] : []),
    { id: 'history', label: `History (${runCount})` },
    { id: 'lab', label: 'Lab' },
  ];
  const buttons = useRef<(HTMLButtonElement | null)[]>([]);
  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>): void => {
    const index = tabs.findIndex((tab) => tab.id === view);
    const delta = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0;
    if (delta === 0) return;
    event.preventDefault();
    const next = (index + delta + tabs.length) % tabs.length;
    store.getState().setView(tabs[next]!.id);
    buttons.current[next]?.focus();
  };
  return (
    <main className="workspace" id="workspace" aria-label="Results">
      <div className="tabs" role="tablist" aria-label="Views" onKeyDown={onKeyDown}>
        {tabs.map((tab, index) => (
          <button
            key={tab.id}
            ref={(el) => { buttons.current[index] = el; }}
            type="button"
            role="tab"
            id={`tab-${tab.id}`}
            aria-selected={view === tab.id}
            aria-controls={`panel-${tab.id}`}
            tabIndex={view === tab.id ? 0 : -1}
            className={view === tab.id ? 'active' : undefined}
            onClick={() => store.getState().setView(tab.id)}
            data-testid={`tab-${tab.id}`}
          >
            {tab.label}
          </button>
        ))}
      </div>
      <section className="tab-panel" role="tabpanel" id={`panel-${view}`} aria-labelledby={`tab-${view}`}>
        {view === 'live' && <LiveView />}
        {view === 'saved' && <SavedRunView />}
        {view === 'compare' && <CompareView />}
        {view === 'history' && <HistoryView />}
        {view === 'lab' && <LabView />}
      </section>
    </main>
  );
}
