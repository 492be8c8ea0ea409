import { describe, expect, it } from 'vitest';
import type { SweepRow } from '../../../app/lab/sweep-results.js';
import { readChartTheme } from '../../charts/chart-theme.js';
import type { LabChartChoice } from '../../store/lab-slice.js';
import { paretoOption } from './lab-charts.js';

function row(index: number, nbits: number, kld: number): SweepRow {
  return {
    index, name: `point-${index}`, status: 'ok', reason: null, options: { backend: 'quanto', nbits, 'group-size': 32 },
    settings: { cacheMode: 'quantized', backend: 'quanto', nbits, axisKey: 0, axisValue: 0, groupSize: 32, residualLength: 32, layers: 'all', parts: 'both' },
    result: {
      tokens: 128, ppl: 1, pplError: 0, pplReference: 1, pplReferenceError: 0, deltaPpl: 0, deltaPplError: 0, pplRatio: 1, pplRatioError: 0,
      kldMean: kld, kldMeanError: 0, kldMedian: kld, kldP99: kld, kldP999: kld, kldMax: kld, top1Agreement: 1, top1AgreementError: 0,
      deltaPMean: 0, deltaPMeanError: 0, deltaPRms: 0, deltaPRmsError: 0, bitsPerValue: nbits + 0.5, storedBytes: 1000 * nbits, fp16BaselineBytes: 16000,
    },
  };
}

type Formatter = (params: { value: unknown }) => string;
interface PointsSeries { label: { show: boolean; formatter: Formatter }; emphasis: { label: { show: boolean; formatter: Formatter } }; data: unknown[] }

function pointsSeries(choice: Partial<LabChartChoice>): PointsSeries {
  const full: LabChartChoice = { x: 'bits', y: 'kld', logX: false, logY: true, labels: false, ...choice };
  const { option } = paretoOption([row(0, 2, 0.3), row(1, 4, 0.01)], full, readChartTheme());
  return (option['series'] as PointsSeries[])[0]!;
}

describe('paretoOption labels', () => {
  it('names a point on hover only by default, with its whole settings', () => {
    const series = pointsSeries({});
    expect(series.label.show).toBe(false);
    expect(series.emphasis.label.show).toBe(true);
    expect(series.emphasis.label.formatter(series.data[0] as { value: unknown })).toBe('quanto 2-bit g32 R32 axes 0/0');
  });

  it('names every point always when asked, by the options that differ between points', () => {
    const series = pointsSeries({ labels: true });
    expect(series.label.show).toBe(true);
    expect(series.data.map((item) => series.label.formatter(item as { value: unknown }))).toEqual(['nbits 2', 'nbits 4']);
  });
});

describe('paretoOption label sides', () => {
  it('puts the label of a dot crowding an earlier one below it, so both are named', () => {
    const choice: LabChartChoice = { x: 'bits', y: 'kld', logX: false, logY: false, labels: true };
    const { option } = paretoOption([row(0, 2, 0.3), row(1, 4, 0.0100), row(2, 4, 0.0101)], choice, readChartTheme());
    const data = (option['series'] as { data: { label?: { position: string } }[] }[])[0]!.data;
    expect(data.map((item) => item.label?.position ?? 'top')).toEqual(['top', 'top', 'bottom']);
  });
});
