/**
 * A table for a paper: LaTeX with booktabs rules (\toprule, \midrule, \bottomrule), as the booktabs
 * manual recommends (no vertical rules), numeric columns right-aligned. Text is escaped for LaTeX's
 * ten special characters, so a settings string with `_`, `%`, `#` or `&` compiles as written.
 */
export interface LatexTable {
  readonly caption: string;
  /** \label{…} key, e.g. `tab:kvscope-sweep-…` */
  readonly label: string;
  readonly headers: readonly string[];
  readonly rows: readonly (readonly (string | number | null)[])[];
  /** per column: right-align numbers */
  readonly numeric: readonly boolean[];
}

const SPECIAL: Readonly<Record<string, string>> = {
  '\\': '\\textbackslash{}', '{': '\\{', '}': '\\}', '$': '\\$', '&': '\\&', '#': '\\#', '%': '\\%', '_': '\\_',
  '~': '\\textasciitilde{}', '^': '\\textasciicircum{}',
};

export function latexEscape(text: string): string {
  return text.replace(/[\\{}$&#%_~^]/g, (c) => SPECIAL[c]!).replace(/‖/g, '$\\|$').replace(/·/g, '$\\cdot$').replace(/×/g, '$\\times$').replace(/−/g, '$-$').replace(/Δ/g, '$\\Delta$').replace(/∈/g, '$\\in$');
}

function cell(value: string | number | null): string {
  if (value === null) return '--';
  return typeof value === 'number' ? (Number.isFinite(value) ? String(value) : latexEscape(String(value))) : latexEscape(value);
}

/** The table as a `table` float with a booktabs `tabular` (needs \usepackage{booktabs}). */
export function latexTable(table: LatexTable): string {
  const spec = table.headers.map((_, i) => (table.numeric[i] === true ? 'r' : 'l')).join('');
  const line = (cells: readonly string[]): string => `    ${cells.join(' & ')} \\\\`;
  return [
    '% needs \\usepackage{booktabs}',
    '\\begin{table}[t]',
    '  \\centering',
    `  \\caption{${latexEscape(table.caption)}}`,
    `  \\label{${table.label.replace(/[^A-Za-z0-9:._-]/g, '-')}}`,
    `  \\begin{tabular}{${spec}}`,
    '    \\toprule',
    line(table.headers.map(latexEscape)),
    '    \\midrule',
    ...table.rows.map((row) => line(row.map(cell))),
    '    \\bottomrule',
    '  \\end{tabular}',
    '\\end{table}',
    '',
  ].join('\n');
}
