import type { Registry } from 'prom-client';

/**
 * Counters and histograms for the proxy's per-request path, exposed through a
 * prom-client registry (which writes the text format). prom-client's own
 * `labels(...).observe()` validates and hashes the label set and allocates
 * on every call, about a microsecond per metric; here a caller resolves a
 * label set to its series once and keeps it, so counting a request is a few
 * additions. The series are what prom-client would make from the same
 * labels, so the exposition is the same.
 */
export interface CounterSeries {
  inc(by?: number): void;
}

export interface HistogramSeries {
  observe(value: number): void;
}

interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

abstract class FastFamily<S> {
  protected readonly all = new Map<string, { labels: Record<string, string>; series: S }>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'histogram',
    protected readonly labelNames: readonly string[],
    registry: Registry,
  ) {
    // prom-client asks a registered metric only for name, get() and reset().
    registry.registerMetric(this as never);
  }

  protected abstract make(): S;
  protected abstract values(labels: Record<string, string>, series: S): MetricValue[];

  series(...labelValues: string[]): S {
    const key = labelValues.join('\u0000');
    let entry = this.all.get(key);
    if (!entry) {
      const labels: Record<string, string> = {};
      this.labelNames.forEach((n, i) => (labels[n] = labelValues[i]!));
      entry = { labels, series: this.make() };
      this.all.set(key, entry);
    }
    return entry.series;
  }

  get() {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: 'sum',
      values: [...this.all.values()].flatMap((e) => this.values(e.labels, e.series)),
    };
  }

  reset(): void {
    this.all.clear();
  }
}

class Count implements CounterSeries {
  value = 0;
  inc(by = 1): void {
    this.value += by;
  }
}

export class FastCounter extends FastFamily<Count> {
  constructor(registry: Registry, o: { name: string; help: string; labelNames: readonly string[] }) {
    super(o.name, o.help, 'counter', o.labelNames, registry);
  }
  protected make(): Count {
    return new Count();
  }
  protected values(labels: Record<string, string>, s: Count): MetricValue[] {
    return [{ labels, value: s.value }];
  }
}

class Buckets implements HistogramSeries {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length);
  }
  observe(value: number): void {
    this.sum += value;
    this.count++;
    const b = this.bounds;
    for (let i = 0; i < b.length; i++) {
      if (value <= b[i]!) {
        this.counts[i]!++;
        return;
      }
    }
  }
}

export class FastHistogram extends FastFamily<Buckets> {
  private readonly bounds: readonly number[];
  constructor(registry: Registry, o: { name: string; help: string; labelNames: readonly string[]; buckets: readonly number[] }) {
    super(o.name, o.help, 'histogram', o.labelNames, registry);
    this.bounds = o.buckets;
  }
  protected make(): Buckets {
    return new Buckets(this.bounds);
  }
  protected values(labels: Record<string, string>, s: Buckets): MetricValue[] {
    let cumulative = 0;
    const out: MetricValue[] = this.bounds.map((le, i) => {
      cumulative += s.counts[i]!;
      return { labels: { ...labels, le }, value: cumulative, metricName: `${this.name}_bucket` };
    });
    out.push({ labels: { ...labels, le: '+Inf' }, value: s.count, metricName: `${this.name}_bucket` });
    out.push({ labels, value: s.sum, metricName: `${this.name}_sum` });
    out.push({ labels, value: s.count, metricName: `${this.name}_count` });
    return out;
  }
}
