import { sumLayerMemory } from '../cache/layer-memory.js';
import type { StepMetrics } from '../engine/types.js';
import { formatBytes } from './byte-size.js';

/**
 * The one-line progress bar of `kvscope run` on a terminal's stderr:
 * `[#########...............] 12/32 tokens  85.3 tok/s  KV 10.3 KiB vs fp16 20.5 KiB`.
 * Redrawn in place (`\r` + erase line) once per metrics batch, so at most ~12 times a second.
 */
export class RunProgress {
  private tokens = 0;
  private last: StepMetrics | undefined;
  private drawn = false;

  constructor(private readonly maxNewTokens: number, private readonly write: (text: string) => void, private readonly width = 24) {}

  update(steps: readonly StepMetrics[]): void {
    if (steps.length === 0) return;
    this.tokens += steps.length;
    this.last = steps[steps.length - 1];
    this.write(`\r\x1b[2K${this.line()}`);
    this.drawn = true;
  }

  /** Erases the bar so the next output starts on a clean line. */
  clear(): void {
    if (this.drawn) this.write('\r\x1b[2K');
    this.drawn = false;
  }

  line(): string {
    const done = Math.min(this.tokens, this.maxNewTokens);
    const filled = this.maxNewTokens === 0 ? this.width : Math.round((done / this.maxNewTokens) * this.width);
    const bar = `[${'#'.repeat(filled)}${'.'.repeat(this.width - filled)}]`;
    const parts = [`${bar} ${done}/${this.maxNewTokens} tokens`];
    if (this.last !== undefined) {
      parts.push(`${this.last.tokensPerSecond.toFixed(1)} tok/s`);
      const total = sumLayerMemory(this.last.kvBytes);
      parts.push(`KV ${formatBytes(total.totalBytes)} vs fp16 ${formatBytes(total.fp16BaselineBytes)}`);
    }
    return parts.join('  ');
  }
}
