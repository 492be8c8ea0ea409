/**
 * The sweep's progress line on a terminal's stderr:
 * `[#######.................] 5/12 points  1 failed  running: backend-hqq_nbits-4`.
 */
export class SweepProgress {
  private done: number;
  private failed = 0;
  private readonly running = new Set<string>();
  private drawn = false;

  constructor(private readonly write: (text: string) => void, private readonly total: number, already: number, private readonly width = 24) {
    this.done = already;
  }

  start(name: string): void {
    this.running.add(name);
    this.draw();
  }

  finish(name: string, status: 'ok' | 'refused' | 'failed'): void {
    this.running.delete(name);
    this.done++;
    if (status !== 'ok') this.failed++;
    this.draw();
  }

  clear(): void {
    if (this.drawn) this.write('\r\x1b[2K');
    this.drawn = false;
  }

  line(): string {
    const filled = this.total === 0 ? this.width : Math.round((this.done / this.total) * this.width);
    const parts = [`[${'#'.repeat(filled)}${'.'.repeat(this.width - filled)}] ${this.done}/${this.total} points`];
    if (this.failed > 0) parts.push(`${this.failed} refused or failed`);
    if (this.running.size > 0) parts.push(`running: ${[...this.running].join(', ')}`);
    return parts.join('  ');
  }

  private draw(): void {
    this.write(`\r\x1b[2K${this.line()}`);
    this.drawn = true;
  }
}
