/**
 * Prometheus text exposition (format 0.0.4) without a dependency: counters,
 * gauges (set directly or read at scrape time) and histograms, with labels.
 */

export type Labels = Record<string, string>;

const labelText = (labels: Labels): string => {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')}"`);
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
};

const keyOf = (labels: Labels): string => JSON.stringify(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)));

const num = (v: number): string => (Number.isFinite(v) ? String(v) : v > 0 ? '+Inf' : v < 0 ? '-Inf' : 'NaN');

interface Metric {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  lines(): string[];
}

export class Counter implements Metric {
  readonly type = 'counter';
  private readonly values = new Map<string, { labels: Labels; value: number }>();
  constructor(readonly name: string, readonly help: string) {}
  inc(labels: Labels = {}, by = 1): void {
    const k = keyOf(labels);
    const cur = this.values.get(k);
    if (cur) cur.value += by;
    else this.values.set(k, { labels, value: by });
  }
  get(labels: Labels = {}): number {
    return this.values.get(keyOf(labels))?.value ?? 0;
  }
  lines(): string[] {
    return [...this.values.values()].map((v) => `${this.name}${labelText(v.labels)} ${num(v.value)}`);
  }
}

export type GaugeCollector = () => number | { labels: Labels; value: number }[];

export class Gauge implements Metric {
  readonly type = 'gauge';
  private readonly values = new Map<string, { labels: Labels; value: number }>();
  private readonly collectors: GaugeCollector[] = [];
  constructor(readonly name: string, readonly help: string) {}
  set(value: number, labels: Labels = {}): void {
    this.values.set(keyOf(labels), { labels, value });
  }
  /** Reads the value at scrape time (several collectors add up their series). */
  collect(fn: GaugeCollector): void {
    this.collectors.push(fn);
  }
  lines(): string[] {
    const out = new Map(this.values);
    for (const c of this.collectors) {
      const r = c();
      const series = typeof r === 'number' ? [{ labels: {}, value: r }] : r;
      for (const s of series) {
        const k = keyOf(s.labels);
        const prev = out.get(k);
        out.set(k, { labels: s.labels, value: (prev?.value ?? 0) + s.value });
      }
    }
    return [...out.values()].map((v) => `${this.name}${labelText(v.labels)} ${num(v.value)}`);
  }
}

export class Histogram implements Metric {
  readonly type = 'histogram';
  private readonly series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
  constructor(readonly name: string, readonly help: string, readonly buckets: readonly number[]) {}
  observe(value: number, labels: Labels = {}): void {
    const k = keyOf(labels);
    let s = this.series.get(k);
    if (!s) {
      s = { labels, counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.series.set(k, s);
    }
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]!) s.counts[i]!++;
    s.sum += value;
    s.count++;
  }
  count(labels: Labels = {}): number {
    return this.series.get(keyOf(labels))?.count ?? 0;
  }
  lines(): string[] {
    const out: string[] = [];
    for (const s of this.series.values()) {
      this.buckets.forEach((b, i) => out.push(`${this.name}_bucket${labelText({ ...s.labels, le: num(b) })} ${s.counts[i]}`));
      out.push(`${this.name}_bucket${labelText({ ...s.labels, le: '+Inf' })} ${s.count}`);
      out.push(`${this.name}_sum${labelText(s.labels)} ${num(s.sum)}`);
      out.push(`${this.name}_count${labelText(s.labels)} ${s.count}`);
    }
    return out;
  }
}

/** Latency buckets in seconds, 1 ms to 10 s. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

/** One per process; `render()` is the body of `GET /metrics`. */
export class MetricsRegistry {
  private readonly metrics = new Map<string, Metric>();

  private add<M extends Metric>(m: M): M {
    const existing = this.metrics.get(m.name);
    if (existing !== undefined) {
      if (existing.type !== m.type) throw new Error(`metric ${m.name} already registered as a ${existing.type}`);
      return existing as M;
    }
    this.metrics.set(m.name, m);
    return m;
  }

  counter(name: string, help: string): Counter {
    return this.add(new Counter(name, help));
  }
  gauge(name: string, help: string): Gauge {
    return this.add(new Gauge(name, help));
  }
  histogram(name: string, help: string, buckets: readonly number[] = LATENCY_BUCKETS): Histogram {
    return this.add(new Histogram(name, help, buckets));
  }

  render(): string {
    const out: string[] = [];
    for (const m of this.metrics.values()) {
      out.push(`# HELP ${m.name} ${m.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`);
      out.push(`# TYPE ${m.name} ${m.type}`);
      out.push(...m.lines());
    }
    return out.join('\n') + '\n';
  }
}

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
