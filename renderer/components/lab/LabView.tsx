import { useEffect, type ReactNode } from 'react';
import './lab.css';
import { useWorkbench } from '../../services.js';
import { ComparePanel } from './ComparePanel.js';
import { HeatmapPanel } from './HeatmapPanel.js';
import { ParetoPanel } from './ParetoPanel.js';
import { PointDetail } from './PointDetail.js';
import { RetrievalMapPanel } from './RetrievalMapPanel.js';
import { ResultsTable } from './ResultsTable.js';
import { SweepHistory } from './SweepHistory.js';
import { SweepSetup } from './SweepSetup.js';
import { SweepStatus } from './SweepStatus.js';
import { useLabController } from './use-lab.js';

/**
 * The Lab: evaluate the run panel's cache on a text, or sweep some of its fields, and see the
 * trade-off as points arrive (Pareto scatter, llama.cpp's table, the layer sensitivity heatmap,
 * N-way comparison); sweeps are saved and listed, and can be reopened and resumed.
 */
export function LabView(): ReactNode {
  const lab = useLabController();
  const { status, rows } = useWorkbench((s) => ({ status: s.lab.sweep.status, rows: s.lab.sweep.rows.length }));
  useEffect(() => {
    void lab.refreshHistory();
  }, [lab]);
  if (!lab.available) return <p className="muted" data-testid="lab-unavailable">This host has no Lab: it cannot run evaluations.</p>;
  return (
    <div className="lab-view" data-testid="lab-view">
      <div className="lab-columns">
        <div className="lab-side">
          <SweepSetup />
          <SweepHistory />
        </div>
        <div className="lab-main">
          <SweepStatus />
          {status === 'idle' && rows === 0 ? (
            <p className="muted lab-empty" data-testid="lab-empty">Set up an evaluation or a sweep on the left, or open a saved sweep.</p>
          ) : (
            <>
              <ParetoPanel />
              <RetrievalMapPanel />
              <HeatmapPanel />
            </>
          )}
        </div>
      </div>
      {/* the tables take the view's whole width, so their metrics stay on screen at 1280 px */}
      {!(status === 'idle' && rows === 0) && (
        <div className="lab-wide">
          <ResultsTable />
          <ComparePanel />
          <PointDetail />
        </div>
      )}
    </div>
  );
}
