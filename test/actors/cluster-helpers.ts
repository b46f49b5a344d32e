import { spawn, type ChildProcess } from 'node:child_process';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { createClient } from 'redis';
import { createClusteredActorSystem, type ActorSystem, type ActorSystemSettings } from '../../src/actors/index.js';
import type { Logger } from '../../src/log.js';
import { RedisActorStore } from '../../src/store/actors/redis.js';
import { freePort } from '../harness/servers.js';
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

/** A clustered node in a process of its own (`test/actors/cluster/node.ts`), with its test HTTP port. */
export interface NodeProcess {
  id: string;
  port: number;
  proc: ChildProcess;
  /** The tail of its stderr (its log), kept up to date. */
  output: string;
}

/** Starts a node process with `env` added to the test's own; resolves once it printed READY. */
export async function startNodeProcess(id: string, env: Record<string, string>, opts: { keepOutput: number; startTimeoutMs: number }): Promise<NodeProcess> {
  const port = await freePort();
  const proc = spawn(process.execPath, ['--import', 'tsx', 'test/actors/cluster/node.ts'], {
    env: { ...process.env, NODE_ENV: 'test', NODE_ID: id, TEST_HTTP_PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const node: NodeProcess = { id, port, proc, output: '' };
  proc.stderr!.on('data', (d: Buffer) => (node.output = (node.output + d.toString()).slice(-opts.keepOutput)));
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${id} did not start:\n${node.output}`)), opts.startTimeoutMs);
    proc.stdout!.on('data', (d: Buffer) => {
      if (d.toString().includes('READY')) {
        clearTimeout(t);
        resolve();
      }
    });
    proc.once('exit', (code) => reject(new Error(`${id} exited with ${code}:\n${node.output}`)));
  });
  return node;
}
