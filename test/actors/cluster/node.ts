/**
 * One node of the cluster test, run as its own process:
 *   node --import tsx test/actors/cluster/node.ts
 * with the service's config variables (NATS_URL, REDIS_URL, NODE_ID,
 * KEY_PREFIX, ACTOR_*) and TEST_HTTP_PORT. It serves the test's `log` actor
 * and a tiny HTTP API the driver talks to:
 *   POST /ask    {key, command, idempotencyKey, timeoutMs} -> {ok, reply} | {ok:false, error}
 *   GET  /stats  -> {nodeId, owned, fencedWrites}
 * Prints "READY" on stdout once it has joined.
 */
import { createServer } from 'node:http';
import { connect } from '@nats-io/transport-node';
import { createClient } from 'redis';
import { actorSettingsFromConfig, createClusteredActorSystem, durableActor } from '../../../src/actors/index.js';
import { loadConfig } from '../../../src/config.js';
import { isAppError } from '../../../src/errors.js';
import { createLogger } from '../../../src/log.js';
import { FencedWriteError, type ActorStateRef } from '../../../src/store/actors/port.js';
import { RedisActorStore } from '../../../src/store/actors/redis.js';
import type { Fence } from '../../../src/domain/fence.js';
import { logActorSpec } from '../log-actor.js';
import { RecordingPublisher } from '../helpers.js';

// The actor runtime alone keeps its state in Redis and opens no database; the variable only completes a clustered configuration.
const cfg = loadConfig({ DATABASE_URL: 'postgres://127.0.0.1/unused', ...process.env });
const settings = actorSettingsFromConfig(cfg);
const log = createLogger(cfg.LOG_LEVEL, { node: settings.nodeId }, (line) => process.stderr.write(line + '\n'));

let fencedWrites = 0;
/** Counts the writes the fence refused: the test checks a resumed node tried and failed. */
class CountingStore extends RedisActorStore {
  override async save(ref: ActorStateRef, value: unknown, fence: Fence): Promise<void> {
    try {
      await super.save(ref, value, fence);
    } catch (e) {
      if (e instanceof FencedWriteError) {
        fencedWrites++;
        log.warn('fenced write refused', { key: ref.key, partition: fence.partition, epoch: fence.epoch });
      }
      throw e;
    }
  }
}

const nc = await connect({ servers: cfg.NATS_URL!, name: settings.nodeId, noAsyncTraces: true });
const redis = createClient({ url: cfg.REDIS_URL! });
await redis.connect();
const store = new CountingStore(redis, cfg.KEY_PREFIX);
const system = createClusteredActorSystem(settings, { store, nats: nc, prefix: cfg.KEY_PREFIX, log });
system.register('log', durableActor(logActorSpec(settings.nodeId), { store, events: new RecordingPublisher() }));
await system.start();

const server = createServer((req, res) => {
  const send = (body: unknown) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  if (req.method === 'GET' && req.url === '/stats') {
    send({ nodeId: settings.nodeId, owned: system.coordinator.ownedPartitions(), fencedWrites });
    return;
  }
  let raw = '';
  req.on('data', (d: Buffer) => (raw += d.toString()));
  req.on('end', () => {
    const body = JSON.parse(raw) as { key: string; command: unknown; idempotencyKey: string; timeoutMs?: number };
    system.ask({ type: 'log', key: body.key }, body.command, { idempotencyKey: body.idempotencyKey, timeoutMs: body.timeoutMs }).then(
      (reply) => send({ ok: true, reply }),
      (e: unknown) => send({ ok: false, error: isAppError(e) ? { status: e.status, code: e.code } : { status: 500, code: String(e) } }),
    );
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.TEST_HTTP_PORT), '127.0.0.1', () => process.stdout.write('READY\n'));

process.on('SIGTERM', () => {
  void (async () => {
    server.close();
    await system.stop();
    await nc.drain();
    await redis.quit();
    process.exit(0);
  })();
});
