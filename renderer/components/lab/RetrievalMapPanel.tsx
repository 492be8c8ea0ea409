import { useMemo, useRef, useState, type ReactNode } from 'react';
import type { ChartInstance } from '../../charts/echarts-core.js';
import { useChartTheme, useWorkbench } from '../../services.js';
import { FigureExports } from '../common/FigureExports.js';
import { LabChart } from './LabChart.js';
import { retrievalMapGroups, retrievalMapOption, type RetrievalMapMode } from './retrieval-maps.js';
import { sweepIdentity } from './sweep-identity.js';

/**
 * A retrieval sweep's depth × length accuracy map (a sweep whose points carry a task), one per
 * configuration, or its difference to the full-precision dynamic cache; exported as the other charts.
 * Nothing for a sweep without retrieval points.
 */
export function RetrievalMapPanel(): ReactNode {
  const theme = useChartTheme();
  const { rows, sweepId, name, spec } = useWorkbench((s) => ({ rows: s.lab.sweep.rows, sweepId: s.lab.sweep.sweepId, name: s.lab.sweep.name, spec: s.lab.sweep.spec }));
  const groups = useMemo(() => retrievalMapGroups(rows), [rows]);
  const [chosen, setChosen] = useState<string | null>(null);
  const [mode, setMode] = useState<RetrievalMapMode>('accuracy');
  const group = groups.find((g) => g.name === chosen) ?? groups[0];
  const option = useMemo(() => (group === undefined ? null : retrievalMapOption(mode === 'accuracy' ? group.map : group.difference, mode, theme)), [group, mode, theme]);
  const instance = useRef<ChartInstance | null>(null);
  if (group === undefined || option === null) return null;
  const title = `${group.task}: ${mode === 'accuracy' ? 'accuracy' : 'accuracy − full precision'} by depth and length, ${group.label}`;
  const cells = group.map.accuracy.flat().filter((value) => value !== null).length;
  return (
    <section className="panel lab-heatmap" aria-label="Retrieval map">
      <header className="view-header">
        <h3>Retrieval: {group.task} <span className="muted">({mode === 'accuracy' ? 'accuracy per cell' : 'difference to the full-precision dynamic cache'})</span></h3>
        <div className="button-row">
          {groups.length > 1 && (
            <select value={group.name} onChange={(e) => setChosen(e.target.value)} aria-label="Configuration of the map" data-testid="lab-retrieval-group">
              {groups.map((g) => <option key={g.name} value={g.name}>{g.label}</option>)}
            </select>
          )}
          <select value={mode} onChange={(e) => setMode(e.target.value as RetrievalMapMode)} aria-label="What the map shows" data-testid="lab-retrieval-mode">
            <option value="accuracy">accuracy</option>
            <option value="difference">− full precision</option>
          </select>
          <FigureExports chart={() => instance.current} title={title} identity={sweepIdentity(sweepId, name, spec)}
            fileStem={`kvscope-sweep-${sweepId ?? 'lab'}-retrieval-${group.name}-${mode}`} disabled={sweepId === null} testId="lab-retrieval" />
        </div>
      </header>
      <LabChart option={option} points={cells} testId="lab-retrieval-map" label={title} height={260} onChart={(chart) => { instance.current = chart; }} />
    </section>
  );
}
