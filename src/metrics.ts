import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Latency buckets in seconds, 1 ms to 10 s. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

/** Event lag buckets in seconds, 10 ms to 10 minutes: how long an event waited before a consumer handled it. */
export const LAG_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 600] as const;

/**
 * The metrics of one service instance, served at `GET /metrics`: a
 * prom-client `Registry` of its own (not prom-client's global one, so
 * several services in one process, as in the tests, never mix their series),
 * with Node's default process metrics (`process_*`, `nodejs_*`).
 *
 * Names are documented in docs/metrics.md; a name, once published, keeps its
 * meaning and labels.
 */
export class MetricsRegistry {
  readonly registry = new Registry();

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    if (opts.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  counter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
    return this.existing(name, 'counter') ?? new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  histogram<L extends string = never>(name: string, help: string, labelNames: readonly L[] = [], buckets: readonly number[] = LATENCY_BUCKETS): Histogram<L> {
    return this.existing(name, 'histogram') ?? new Histogram({ name, help, labelNames, buckets: [...buckets], registers: [this.registry] });
  }

  /** A gauge read at scrape time. */
  gauge(name: string, help: string, read: () => number | Promise<number>): Gauge {
    if (this.registry.getSingleMetric(name) !== undefined) throw new Error(`metric ${name} is already registered`);
    return new Gauge({
      name,
      help,
      registers: [this.registry],
      async collect() {
        this.set(await read());
      },
    });
  }

  /** The exposition text of every metric. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private existing<M>(name: string, type: 'counter' | 'histogram'): M | undefined {
    const m = this.registry.getSingleMetric(name);
    if (m === undefined) return undefined;
    const ok = type === 'counter' ? m instanceof Counter : m instanceof Histogram;
    if (!ok) throw new Error(`metric ${name} is already registered as another type`);
    return m as M;
  }
}
