import { connect, type NatsConnection } from '@nats-io/transport-node';
import { createClient } from 'redis';
import { createClusteredActorSystem, type ActorSystem, type ActorSystemSettings } from '../../src/actors/index.js';
import type { Logger } from '../../src/log.js';
import { RedisActorStore } from '../../src/store/actors/redis.js';
import { testSettings } from './helpers.js';

export interface ClusterNode {
  nodeId: string;
  system: ActorSystem;
  store: RedisActorStore;
  nc: NatsConnection;
  /** Graceful: hands partitions over, then disconnects. */
  stop(): Promise<void>;
}

/** One clustered node in this process: its own NATS connection and Redis client. */
export async function startClusterNode(opts: {
  natsUrl: string;
  redisUrl: string;
  nodeId: string;
  prefix: string;
  settings?: Partial<ActorSystemSettings>;
  log?: Logger;
  register: (system: ActorSystem, store: RedisActorStore) => void;
}): Promise<ClusterNode> {
  const nc = await connect({ servers: opts.natsUrl, name: opts.nodeId });
  const redis = createClient({ url: opts.redisUrl });
  await redis.connect();
  const store = new RedisActorStore(redis, opts.prefix);
  const system = createClusteredActorSystem(testSettings({ nodeId: opts.nodeId, ...opts.settings }), { store, nats: nc, prefix: opts.prefix, log: opts.log });
  opts.register(system, store);
  await system.start();
  return {
    nodeId: opts.nodeId,
    system,
    store,
    nc,
    async stop() {
      await system.stop();
      await nc.drain();
      await redis.quit();
    },
  };
}

export async function waitFor(cond: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Every partition owned by exactly one of `nodes`, each owned by its desired node. */
export function ownershipSettled(nodes: ClusterNode[], partitions: number): boolean {
  const owners = new Map<number, string>();
  for (const n of nodes) {
    for (const p of n.system.coordinator.ownedPartitions()) {
      if (owners.has(p)) return false;
      owners.set(p, n.nodeId);
    }
  }
  return owners.size === partitions;
}
