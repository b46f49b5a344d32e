import autocannon from 'autocannon';

export interface LoadResult {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

/** Drives one HTTP endpoint with autocannon and returns requests/s and latency percentiles (ms). */
export async function load(
  name: string,
  opts: { url: string; method?: 'GET' | 'POST' | 'PATCH'; headers?: Record<string, string>; body?: string; connections?: number; duration?: number },
): Promise<LoadResult> {
  const r = await autocannon({
    url: opts.url,
    method: opts.method ?? 'GET',
    headers: opts.headers,
    body: opts.body,
    connections: opts.connections ?? 16,
    duration: opts.duration ?? Number(process.env.BENCH_SECONDS ?? 5),
  });
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.timeouts, non2xx: r.non2xx };
}

/** Prints rows with the ratio of requests/s against a baseline row. */
export function report(title: string, baseline: LoadResult, rows: LoadResult[]): void {
  const fmt = (r: LoadResult) =>
    `${r.name.padEnd(44)} ${r.rps.toFixed(0).padStart(8)} req/s   p50 ${String(r.p50).padStart(4)} ms   p99 ${String(r.p99).padStart(4)} ms   ratio ${(r.rps / baseline.rps).toFixed(2)}${r.errors || r.non2xx ? `   (errors ${r.errors}, non-2xx ${r.non2xx})` : ''}`;
  console.log(`\n## ${title}\n`);
  console.log(fmt(baseline) + '   <- baseline');
  for (const r of rows) console.log(fmt(r));
}
