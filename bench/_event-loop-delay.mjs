// Preloaded into the service by bench/storage.ts: event-loop delay of the process. SIGUSR2 writes
// the figures since the previous signal (ms) to $SB_ELD_FILE and starts a new window.
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const h = monitorEventLoopDelay({ resolution: 5 });
h.enable();
process.on('SIGUSR2', () => {
  if (process.env.SB_ELD_FILE) writeFileSync(process.env.SB_ELD_FILE, JSON.stringify({ p50: h.percentile(50) / 1e6, p99: h.percentile(99) / 1e6, max: h.max / 1e6 }));
  h.reset();
});
