/** One row of a throughput benchmark: MB/s = input float32 bytes / seconds / 1e6 (../shared/golden/throughput.json). */
export interface BenchRow {
  name: string;
  quantizeMBps: number;
  dequantizeMBps: number;
  /** the Python reference on the same workload, where ../shared has one */
  referenceQuantizeMBps?: number;
  referenceDequantizeMBps?: number;
}
