/**
 * A node process for `bench/actors.ts` (3-node runs): the bench actor over
 * NATS + Redis. Config from the usual variables (NATS_URL, REDIS_URL,
 * NODE_ID, KEY_PREFIX, ACTOR_*). Prints READY once it has joined; SIGTERM
 * hands its partitions over and exits.
 */
import { connect } from '@nats-io/transport-node';
import { actorSettingsFromConfig, createClusteredActorSystem } from '../src/actors/index.js';
import { loadConfig } from '../src/config.js';
import { silentLogger } from '../src/log.js';
import { RedisActorStore } from '../src/store/actors/redis.js';
import { connectRedis } from '../src/store/redis/client.js';
import { benchActor } from './actors.js';

// The actor runtime alone keeps its state in Redis and opens no database; the variable only completes a clustered configuration.
const cfg = loadConfig({ DATABASE_URL: 'postgres://127.0.0.1/unused', ...process.env });
const nc = await connect({ servers: cfg.NATS_URL!, noAsyncTraces: true });
const redis = await connectRedis(cfg.REDIS_URL!);
const store = new RedisActorStore(redis, cfg.KEY_PREFIX);
const system = createClusteredActorSystem(actorSettingsFromConfig(cfg), { store, nats: nc, prefix: cfg.KEY_PREFIX, log: silentLogger });
system.register('bench', benchActor(store));
await system.start();
process.stdout.write('READY\n');
process.on('SIGTERM', () => {
  void (async () => {
    try {
      await system.stop();
      await nc.drain();
      await redis.quit();
    } finally {
      process.exit(0);
    }
  })();
});
