import type { EvalProgress } from '../lab/evaluate.js';

/**
 * The one-line progress bar of `kvscope eval` on a terminal's stderr:
 * `[#########...............] reference 3/10 windows`, redrawn in place after each window.
 */
export class LabProgress {
  private drawn = false;

  constructor(private readonly write: (text: string) => void, private readonly width = 24) {}

  update(progress: EvalProgress): void {
    this.write(`\r\x1b[2K${this.line(progress)}`);
    this.drawn = true;
  }

  clear(): void {
    if (this.drawn) this.write('\r\x1b[2K');
    this.drawn = false;
  }

  line(progress: EvalProgress): string {
    const filled = progress.windows === 0 ? this.width : Math.round((progress.windowsDone / progress.windows) * this.width);
    return `[${'#'.repeat(filled)}${'.'.repeat(this.width - filled)}] ${progress.phase === 'reference' ? 'reference' : 'eval'} ${progress.windowsDone}/${progress.windows} windows`;
  }
}
