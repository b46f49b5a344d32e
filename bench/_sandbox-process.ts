/**
 * The sandbox chat network in a process of its own, for bench/messaging.ts:
 * Meta's side runs apart from the service, as the real network does. Serves
 * the Graph API at `/graph/v27.0` (state in an in-memory SQLite database of
 * its own) and a control API for the bench:
 *
 *   POST /control/accounts            {} → a new number (with the sample templates)
 *   POST /control/accounts/:pnid      {callbackUrl} → where its webhooks go
 *   POST /control/targets             {bases: [url…]} → relative callbacks go to these, round robin
 *   POST /control/idle                → once every webhook of every send went out
 *   GET  /control/stats               → sends accepted, throttled (130429), rejected otherwise
 *
 * Env: SANDBOX_MAX_MPS, SANDBOX_STATUS_DELAY_MS. Prints `PORT <n>` once listening.
 */
import type { AddressInfo } from 'node:net';
import express from 'express';
import { systemClock } from '../src/clock.js';
import { silentLogger } from '../src/log.js';
import { createSqliteSandboxState, sandboxGraphRouter, SandboxNetwork } from '../src/network/sandbox/index.js';
import { openSandboxDb } from '../src/store/index.js';
import { createMemoryRateLimiter } from '../src/store/ratelimit/memory.js';

const db = openSandboxDb(null);
const state = createSqliteSandboxState(db);
let bases: string[] = ['http://127.0.0.1:9'];
let next = 0;
const sandbox = new SandboxNetwork({
  state,
  limiter: createMemoryRateLimiter(systemClock),
  clock: systemClock,
  log: silentLogger,
  statusDelayMs: Number(process.env.SANDBOX_STATUS_DELAY_MS ?? 250),
  maxMessagesPerSecond: Number(process.env.SANDBOX_MAX_MPS ?? 100_000),
  webhookBaseUrl: () => bases[next++ % bases.length]!,
});

const stats = { accepted: 0, throttled: 0, rejected: 0 };
const send = sandbox.send.bind(sandbox);
sandbox.send = async (...args) => {
  const r = await send(...args);
  if (r.status === 200) stats.accepted++;
  else if ((r.body as { error?: { code?: number } }).error?.code === 130429) stats.throttled++;
  else stats.rejected++;
  return r;
};

const app = express();
app.use('/graph', sandboxGraphRouter(sandbox));
app.use('/control', express.json());
app.post('/control/accounts', async (_req, res) => {
  res.json(await sandbox.provisionAccount({ callbackUrl: '/unset' }));
});
app.post('/control/accounts/:pnid', async (req, res) => {
  const a = await state.getAccount(req.params.pnid);
  if (a === null) return void res.status(404).json({});
  await state.putAccount({ ...a, callbackUrl: String(req.body.callbackUrl) });
  res.json({ ok: true });
});
app.post('/control/targets', (req, res) => {
  bases = req.body.bases as string[];
  res.json({ ok: true });
});
app.post('/control/idle', async (_req, res) => {
  await sandbox.idle(60_000);
  res.json({ ok: true });
});
app.get('/control/stats', (_req, res) => {
  res.json(stats);
});
const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(`PORT ${(server.address() as AddressInfo).port}\n`);
});
server.keepAliveTimeout = 65_000;
process.on('SIGTERM', () => {
  void sandbox.close().finally(() => process.exit(0));
});
