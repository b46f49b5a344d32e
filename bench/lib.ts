import { readdirSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import express from 'express';
import { connectRedis } from '../src/store/index.js';

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

export interface LoadTarget {
  name: string;
  opts: Parameters<typeof load>[1];
}

/** The item with the median `by` (the upper one of an even count). */
export function medianBy<T>(xs: readonly T[], by: (x: T) => number): T {
  return [...xs].sort((a, b) => by(a) - by(b))[Math.floor(xs.length / 2)]!;
}

/** The run with the median requests/s (its own p50 and p99 with it). */
export function medianRun(runs: LoadResult[]): LoadResult {
  return medianBy(runs, (r) => r.rps);
}

/**
 * The machine is shared and its speed moves by the second: every target runs
 * once in each of `rounds` rounds (BENCH_ROUNDS, default 3), one after the
 * other, after a 2-second warm-up of each (JIT, caches) that is not measured;
 * each target reports its median round.
 */
export async function inRounds(targets: LoadTarget[], rounds = Number(process.env.BENCH_ROUNDS ?? 3)): Promise<LoadResult[]> {
  for (const t of targets) await load(t.name, { ...t.opts, duration: 2 });
  const runs: LoadResult[][] = targets.map(() => []);
  for (let r = 0; r < rounds; r++) for (const [i, t] of targets.entries()) runs[i]!.push(await load(t.name, t.opts));
  return runs.map(medianRun);
}

/** Prints rows with the ratio of requests/s against a baseline row. */
export function report(title: string, baseline: LoadResult, rows: LoadResult[]): void {
  const fmt = (r: LoadResult) =>
    `${r.name.padEnd(44)} ${r.rps.toFixed(0).padStart(8)} req/s   p50 ${String(r.p50).padStart(4)} ms   p99 ${String(r.p99).padStart(4)} ms   ratio ${(r.rps / baseline.rps).toFixed(2)}${r.errors || r.non2xx ? `   (errors ${r.errors}, non-2xx ${r.non2xx})` : ''}`;
  console.log(`\n## ${title}\n`);
  console.log(fmt(baseline) + '   <- baseline');
  for (const r of rows) console.log(fmt(r));
}

/** Like `load`, but each request gets its own body (different contacts, unique ids). */
export async function loadVaried(
  name: string,
  url: string,
  headers: Record<string, string>,
  next: () => { body: string; headers?: Record<string, string> },
  connections = 16,
): Promise<LoadResult> {
  const u = new URL(url);
  const r = await autocannon({
    url: u.origin,
    connections,
    duration: Number(process.env.BENCH_SECONDS ?? 5),
    requests: [
      {
        method: 'POST',
        path: u.pathname,
        setupRequest: (req) => {
          const n = next();
          return { ...req, body: n.body, headers: { ...headers, ...n.headers } };
        },
      },
    ],
  });
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.timeouts, non2xx: r.non2xx };
}

/** The shared baseline: a bare express 5 endpoint doing one Redis SET per POST. */
export async function startBareRedisEndpoint(redisUrl: string): Promise<{ url: string; close(): Promise<void> }> {
  const client = await connectRedis(redisUrl);
  const app = express();
  app.use(express.json());
  let n = 0;
  app.post('/write', async (req, res) => {
    await client.set(`bare:${n++}`, JSON.stringify(req.body));
    res.status(201).json({ ok: true });
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/write`,
    close: async () => {
      server.close();
      await client.close();
    },
  };
}

/** The fields of `/proc/<pid>/stat` after the command name (the state is field 0, the parent's pid 1). */
function procStat(pid: number): string[] {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return f.slice(f.lastIndexOf(')') + 2).split(' ');
}

/** CPU seconds (user + system) a process has used so far. */
export function cpuOf(pid: number): number {
  const f = procStat(pid);
  return (Number(f[11]) + Number(f[12])) / 100;
}

/**
 * CPU seconds of a PostgreSQL server so far: the postmaster, the processes
 * it forked that still run (one backend per connection), and those that
 * ended (reaped by the postmaster, so counted in its children's time).
 */
export function postgresCpu(postmaster: number): number {
  const own = procStat(postmaster);
  let total = (Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14])) / 100;
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (Number(procStat(Number(d))[1]) === postmaster) total += cpuOf(Number(d));
    } catch {
      // ended meanwhile: its time is in the postmaster's children's time now
    }
  }
  return total;
}
