/**
 * A fixed-capacity ring of rows stored as typed columns (STYLE.md §5, §11): one Float64Array per
 * column, allocated once. Writing a row allocates nothing; when the ring is full the oldest row is
 * overwritten. Logical index 0 is the oldest row still held.
 */
export class RingColumns<Name extends string> {
  readonly capacity: number;
  /** physical storage, `[capacity]` per column; read through `physicalIndex` or `copyColumn` */
  readonly columns: Readonly<Record<Name, Float64Array>>;
  #start = 0;
  #length = 0;
  #total = 0;

  constructor(names: readonly Name[], capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`a ring needs a capacity of at least 1 row, got ${capacity}`);
    }
    this.capacity = capacity;
    const columns = {} as Record<Name, Float64Array>;
    for (const name of names) columns[name] = new Float64Array(capacity);
    this.columns = columns;
  }

  /** rows held now (≤ capacity) */
  get length(): number {
    return this.#length;
  }

  /** rows ever written */
  get total(): number {
    return this.#total;
  }

  /** rows overwritten because the ring was full */
  get dropped(): number {
    return this.#total - this.#length;
  }

  /** Reserves the next row and returns its physical index; the caller writes every column at it. */
  nextRow(): number {
    let index: number;
    if (this.#length < this.capacity) {
      index = (this.#start + this.#length) % this.capacity;
      this.#length++;
    } else {
      index = this.#start;
      this.#start = (this.#start + 1) % this.capacity;
    }
    this.#total++;
    return index;
  }

  physicalIndex(logical: number): number {
    return (this.#start + logical) % this.capacity;
  }

  get(name: Name, logical: number): number {
    if (logical < 0 || logical >= this.#length) return NaN;
    return this.columns[name][this.physicalIndex(logical)]!;
  }

  last(name: Name): number {
    return this.get(name, this.#length - 1);
  }

  /** Copies the column, oldest row first, into `out` (at least `length` long); returns the row count. */
  copyColumn(name: Name, out: Float64Array): number {
    const column = this.columns[name];
    const head = Math.min(this.#length, this.capacity - this.#start);
    out.set(column.subarray(this.#start, this.#start + head), 0);
    if (head < this.#length) out.set(column.subarray(0, this.#length - head), head);
    return this.#length;
  }

  clear(): void {
    this.#start = 0;
    this.#length = 0;
    this.#total = 0;
  }
}
