// @vitest-environment jsdom
import { describe, expect, it } from 'vitest';
import { readChartTheme } from '../charts/chart-theme.js';
import { figureHeaderHeight, figureSvg } from './chart-figure.js';

describe('figureSvg', () => {
  const header = { title: 'KV memory <over> steps', identity: { runId: '20260101-120000-abc', model: 'stories260k (onnx/model.onnx)', settings: 'quanto 4-bit · group 64 & residual 128' }, software: 'kvscope 0.1.0' };
  const chart = '<?xml version="1.0"?><svg width="600" height="300" xmlns="http://www.w3.org/2000/svg"><path d="M0 0L10 10"/></svg>';

  it('puts the title, run id, model and settings above the chart as vector text, escaped', () => {
    const svg = figureSvg(chart, 600, 300, header, readChartTheme());
    const doc = new DOMParser().parseFromString(svg, 'image/svg+xml');
    expect(doc.getElementsByTagName('parsererror')).toHaveLength(0);
    const texts = [...doc.getElementsByTagName('text')].map((t) => t.textContent);
    expect(texts).toEqual(['KV memory <over> steps', 'run 20260101-120000-abc · stories260k (onnx/model.onnx)', 'quanto 4-bit · group 64 & residual 128']);
    expect(doc.getElementsByTagName('title')[0]!.textContent).toBe('KV memory <over> steps — run 20260101-120000-abc');
    expect(doc.documentElement.getAttribute('height')).toBe(String(300 + figureHeaderHeight()));
  });

  it('keeps the chart whole below the header, without its XML declaration', () => {
    const svg = figureSvg(chart, 600, 300, header, readChartTheme());
    expect(svg).not.toContain('<?xml');
    expect(svg).toContain(`<svg x="0" y="${figureHeaderHeight()}" width="600" height="300"`);
    expect(svg).toContain('<path d="M0 0L10 10"/>');
  });
});
