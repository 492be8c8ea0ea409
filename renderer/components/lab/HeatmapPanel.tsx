import { useMemo, useState, type ReactNode } from 'react';
import { useChartTheme, useWorkbench } from '../../services.js';
import { heatmapOption } from './lab-charts.js';
import { heatmapGroups } from './lab-metrics.js';
import { LabChart } from './LabChart.js';

/** The layer × K/V sensitivity heatmap of a `layers` preset sweep (one per combination of the other settings). */
export function HeatmapPanel(): ReactNode {
  const theme = useChartTheme();
  const rows = useWorkbench((s) => s.lab.sweep.rows);
  const groups = useMemo(() => heatmapGroups(rows), [rows]);
  const keys = [...groups.keys()];
  const [chosen, setChosen] = useState<string | null>(null);
  const key = chosen !== null && groups.has(chosen) ? chosen : keys[0];
  const cells = key === undefined ? [] : groups.get(key)!;
  const option = useMemo(() => heatmapOption(cells, theme), [cells, theme]);
  if (keys.length === 0) return null;
  return (
    <section className="panel lab-heatmap" aria-label="Layer sensitivity">
      <header className="view-header">
        <h3>Sensitivity: mean KLD with one layer quantized <span className="muted">(the others at full precision)</span></h3>
        {keys.length > 1 && (
          <select value={key} onChange={(e) => setChosen(e.target.value)} aria-label="Settings of the heatmap" data-testid="lab-heatmap-group">
            {keys.map((k) => <option key={k} value={k}>{k}</option>)}
          </select>
        )}
      </header>
      <LabChart option={option} points={cells.length} testId="lab-heatmap" label="Mean KLD by layer and by keys, values or both" height={220} />
    </section>
  );
}
