/**
 * Load generator of bench/messaging.ts, run as a process of its own (its CPU
 * is not the service's, and is measured apart): template sends over
 * keep-alive HTTP, round robin over the targets.
 *
 *   node bench/_load-generator.mjs '<json>'
 *
 * json: { targets: [baseUrl…], path, key, channelId, contacts, contactBase, seconds,
 *               connections (closed loop) | rate (open loop, sends/s), tag }
 * Prints one JSON line { sent, ok, statuses: {code: n}, errors, seconds, p50, p99, max } (ms).
 *
 * Open loop: request i is due at start + i / rate and its latency counts from
 * then, so a service that falls behind shows it in the latency (no
 * coordinated omission); requests that would exceed `maxOutstanding` are
 * counted as not sent.
 */
import http from 'node:http';

const w = JSON.parse(process.argv[2]);
const agent = new http.Agent({ keepAlive: true, maxSockets: w.connections ?? 512 });
const targets = w.targets.map((t) => new URL(t));
let n = 0;
const latencies = [];
const statuses = {};
let ok = 0;
let errors = 0;
let sent = 0;
let skipped = 0;

function body(i) {
  return JSON.stringify({
    channelId: w.channelId,
    to: String(w.contactBase + (i % w.contacts)),
    template: {
      name: 'order_update',
      language: { code: 'en_US', policy: 'deterministic' },
      components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ann' }, { type: 'text', text: `${w.tag}-${i}` }, { type: 'text', text: 'Monday' }] }],
    },
  });
}

function request(i) {
  const u = targets[i % targets.length];
  const b = body(i);
  sent++;
  return new Promise((resolve) => {
    const req = http.request(
      { host: u.hostname, port: u.port, path: w.path, method: 'POST', agent, headers: { authorization: `Bearer ${w.key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(b) } },
      (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode >= 200 && res.statusCode < 300) ok++;
          else statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
          resolve();
        });
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error('timeout')));
    req.on('error', () => {
      errors++;
      resolve();
    });
    req.end(b);
  });
}

const start = performance.now();
const end = start + w.seconds * 1000;
if (w.rate === undefined) {
  const loop = async () => {
    while (performance.now() < end) {
      const t = performance.now();
      await request(n++);
      latencies.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: w.connections }, loop));
} else {
  const interval = 1000 / w.rate;
  let outstanding = 0;
  const inFlight = new Set();
  let i = 0;
  const total = Math.floor(w.rate * w.seconds);
  while (i < total) {
    const now = performance.now();
    // Everything due by now goes out (timers are coarse: several per tick at high rates).
    while (i < total && start + i * interval <= now) {
      const due = start + i * interval;
      if (outstanding >= (w.maxOutstanding ?? 5000)) {
        skipped++;
      } else {
        outstanding++;
        const p = request(i).then(() => {
          latencies.push(performance.now() - due);
          outstanding--;
          inFlight.delete(p);
        });
        inFlight.add(p);
      }
      i++;
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all(inFlight);
}
const seconds = (performance.now() - start) / 1000;
latencies.sort((a, b) => a - b);
const pct = (p) => (latencies.length === 0 ? 0 : latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]);
agent.destroy();
const cpu = process.cpuUsage();
process.stdout.write(JSON.stringify({ sent, skipped, ok, statuses, errors, seconds, p50: pct(50), p99: pct(99), max: latencies.at(-1) ?? 0, cpuSeconds: (cpu.user + cpu.system) / 1e6 }) + '\n');
