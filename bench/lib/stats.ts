import type { Latency } from './load.js';

/** Percentile by nearest rank over an unsorted sample (sorted in place). */
export function latencyOf(samples: Float64Array | number[]): Latency {
  const sorted = Float64Array.from(samples).sort();
  const n = sorted.length;
  if (n === 0) return { p50: NaN, p99: NaN, p999: NaN, mean: NaN, max: NaN };
  const at = (q: number) => sorted[Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1))]!;
  let sum = 0;
  for (const v of sorted) sum += v;
  return { p50: at(0.5), p99: at(0.99), p999: at(0.999), mean: sum / n, max: sorted[n - 1]! };
}

/** A growable list of samples that does not allocate one object per sample. */
export class Samples {
  private data = new Float64Array(1024);
  length = 0;
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Float64Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  values(): Float64Array {
    return this.data.subarray(0, this.length);
  }
}

/** The item whose key is the median of the items' (the lower middle one for an even count); undefined for none. */
export function medianBy<T>(items: readonly T[], key: (item: T) => number): T | undefined {
  const sorted = [...items].sort((a, b) => key(a) - key(b));
  return sorted[Math.floor((sorted.length - 1) / 2)];
}
