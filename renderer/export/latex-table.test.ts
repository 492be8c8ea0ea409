import { describe, expect, it } from 'vitest';
import { latexEscape, latexTable } from './latex-table.js';

describe('latexTable', () => {
  it('writes a booktabs table: rules in order, numbers right-aligned, missing values as --', () => {
    const text = latexTable({
      caption: 'Sweep 42 on stories260k', label: 'tab:sweep 42',
      headers: ['settings', 'mean KLD', 'top-1'], numeric: [false, true, true],
      rows: [['quanto 4-bit', 0.0123, 0.98], ['dynamic', null, 1]],
    });
    const lines = text.split('\n');
    expect(lines).toContain('  \\begin{tabular}{lrr}');
    const order = ['\\toprule', '\\midrule', '\\bottomrule'].map((rule) => lines.findIndex((line) => line.trim() === rule));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(order.every((index) => index > 0)).toBe(true);
    expect(text).toContain('    settings & mean KLD & top-1 \\\\');
    expect(text).toContain('    quanto 4-bit & 0.0123 & 0.98 \\\\');
    expect(text).toContain('    dynamic & -- & 1 \\\\');
    expect(text).toContain('\\label{tab:sweep-42}');
    expect(text).not.toMatch(/\|/);
  });

  it('escapes LaTeX\'s special characters so settings text compiles as written', () => {
    expect(latexEscape('g_64 & 50% #1 $x {y} ~^\\')).toBe('g\\_64 \\& 50\\% \\#1 \\$x \\{y\\} \\textasciitilde{}\\textasciicircum{}\\textbackslash{}');
    expect(latexEscape('KL(ref ‖ q) · 4×')).toBe('KL(ref $\\|$ q) $\\cdot$ 4$\\times$');
  });
});
