import type { Config } from '../config.js';
import { openNodeRedis, type NodeRedis } from './redis-client.js';

/**
 * What a node keeps its state in, opened once at start and handed to every
 * module. Clustered: the node's one Redis client (a single server or a Redis
 * Cluster), shared by every store, closed by whoever opened it after every
 * module stopped. Embedded: each module opens its embedded database.
 */
export type NodeBacking = { kind: 'embedded' } | { kind: 'redis'; redis: NodeRedis };

export async function openNodeBacking(config: Config): Promise<NodeBacking> {
  if (config.redis === null) return { kind: 'embedded' };
  return { kind: 'redis', redis: await openNodeRedis(config.redis, `switchboard-${config.NODE_ID ?? process.pid}`) };
}

/** Closes what `openNodeBacking` opened. */
export async function closeNodeBacking(backing: NodeBacking): Promise<void> {
  if (backing.kind === 'redis') await backing.redis.close();
}
