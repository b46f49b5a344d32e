import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { EventPublisher } from '../events/types.js';
import type { Logger } from '../log.js';
import type { MetricsRegistry } from '../metrics.js';
import { SqliteActorStore } from '../store/actors/sqlite.js';
import { RedisActorStore } from '../store/actors/redis.js';
import { PostgresActorReplyStore } from '../store/actors/postgres.js';
import type { NodeBacking } from '../store/backing.js';
import type { ConversationIndexRepo } from '../store/conversations/port.js';
import type { ConversationRecord } from '../domain/conversation.js';
import { CONVERSATION_ACTOR, conversationActorSpec } from './conversation/actor.js';
import type { MessagingHandlerDeps } from './conversation/messaging.js';
import { durableActor } from './durable.js';
import { actorSettingsFromConfig, createClusteredActorSystem, createEmbeddedActorSystem, type ActorSystem } from './system.js';

export interface OpenedActors {
  system: ActorSystem;
  /** Readiness checks of what the runtime depends on (`/readyz`). */
  readiness: { name: string; check(): Promise<void> }[];
  /** Stops the runtime (hands partitions over) and closes its connections. */
  close(): Promise<void>;
}

/**
 * The actor runtime of the configured mode, with the conversation actor
 * registered and started:
 * - clustered — state and leases in Redis, the replies of applied commands
 *   in PostgreSQL (the state keeps their keys' digests), commands over NATS
 *   to the owner of each partition;
 * - neither: embedded — state in the node's SQLite database, in-process delivery.
 */
export async function openActors(
  config: Config,
  backing: NodeBacking,
  deps: { log: Logger; events: EventPublisher; clock?: Clock; metrics?: MetricsRegistry; /** Chat messaging: enables the send / inbound / status commands. */ messaging?: MessagingHandlerDeps; /** The inbox's conversation list, kept up to date by the conversation actors. */ conversations?: ConversationIndexRepo; /** Told each conversation record the list stored, once committed. */ conversationListed?: (record: ConversationRecord) => void },
): Promise<OpenedActors> {
  const settings = actorSettingsFromConfig(config);
  const log = deps.log.child({ component: 'actors', node: settings.nodeId });
  const closers: (() => Promise<void>)[] = [];
  const readiness: OpenedActors['readiness'] = [];
  let system: ActorSystem;
  let store: SqliteActorStore | RedisActorStore;
  let replies: PostgresActorReplyStore | undefined;
  if (backing.kind === 'clustered') {
    replies = new PostgresActorReplyStore(backing.pg, config.ACTOR_REPLY_TTL_HOURS * 3_600_000);
    // Expired replies leave a batch a minute; every node does it, which is harmless.
    const prune = setInterval(() => void replies!.prune().catch((e: unknown) => log.warn('pruning expired actor replies failed', { err: e })), 60_000);
    prune.unref();
    closers.push(async () => clearInterval(prune));
    // The node's client: closed by whoever opened it, after the actors handed their partitions over.
    const redis = backing.redis.client;
    store = new RedisActorStore(redis, config.KEY_PREFIX);
    readiness.push({ name: 'actor_store', check: async () => void (await redis.ping()) });
    if (config.NATS_URL !== undefined) {
      // noAsyncTraces: an Error (with its stack) per request otherwise, a quarter of the CPU of a command.
      const nc: NatsConnection = await connect({ servers: config.NATS_URL, name: settings.nodeId, maxReconnectAttempts: -1, noAsyncTraces: true });
      closers.push(() => nc.drain());
      readiness.push({ name: 'nats', check: async () => void (await nc.rtt()) });
      system = createClusteredActorSystem(settings, { store, nats: nc, prefix: config.KEY_PREFIX, log, clock: deps.clock, metrics: deps.metrics });
    } else {
      log.warn('REDIS_URL without NATS_URL: actors run on this node only; set NATS_URL to run several nodes');
      system = createEmbeddedActorSystem(settings, { store, log, clock: deps.clock, metrics: deps.metrics });
    }
  } else if (backing.kind === 'sqlite') {
    store = new SqliteActorStore(backing.db);
    system = createEmbeddedActorSystem(settings, { store, log, clock: deps.clock, metrics: deps.metrics });
  } else {
    throw new Error('REDIS_URL is needed for the Redis backing');
  }
  system.register(CONVERSATION_ACTOR, durableActor(conversationActorSpec(config.ACTOR_IDEMPOTENCY_KEYS, deps.messaging, deps.conversations, deps.conversationListed), {
      store,
      events: deps.events,
      // Embedded, the state, its events, the messages and the inbox list are one database: one transaction per command.
      // Clustered, a command's PostgreSQL writes: one transaction before its fenced state write in Redis, one after.
      commits: backing.kind === 'sqlite' ? backing.db : backing.pg,
      replies,
    }),);
  await system.start();
  readiness.push({
    name: 'actors',
    check: async () => {
      if (!system.coordinator.isLive()) throw new Error('placement has not renewed its membership recently');
    },
  });
  return {
    system,
    readiness,
    async close() {
      await system.stop();
      for (const c of closers.reverse()) await c();
    },
  };
}
