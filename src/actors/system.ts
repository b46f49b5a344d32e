import { randomBytes, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Config } from '../config.js';
import type { NatsConnection } from '@nats-io/transport-node';
import { silentLogger, type Logger } from '../log.js';
import type { MetricsRegistry } from '../metrics.js';
import type { ActorStateStore, PartitionLeaseStore } from '../store/actors/port.js';
import type { Command } from './durable.js';
import { ActorHost, type CommandObserver } from './host.js';
import { NatsActorTransport } from './nats-transport.js';
import { PartitionCoordinator } from './placement.js';
import { InProcessTransport, type ActorTransport } from './transport.js';
import { systemClock, type ActorAddress, type ActorFactory, type AskOptions, type Clock } from './types.js';

export interface ActorSystemSettings {
  nodeId: string;
  /** Fixed for the deployment's lifetime. */
  partitions: number;
  leaseMs: number;
  mailboxSize: number;
  idleMs: number;
  /** Default time an `ask` waits for its reply (including failover). */
  askTimeoutMs: number;
  /** One network attempt's wait (clustered mode). */
  attemptTimeoutMs: number;
  /** How often the other nodes' NATS connections are checked (clustered mode); 0 or unset: never, a dead node waits out its lease. */
  probeMs?: number;
}

export interface ActorSystemDeps {
  /** Actor state and partition leases (embedded or Redis adapter). */
  store: ActorStateStore & PartitionLeaseStore;
  clock?: Clock;
  log?: Logger;
  metrics?: MetricsRegistry;
}

/**
 * The actor runtime of one node: where REST, MCP and WS handlers send
 * commands (`ask` for a reply, `tell` to have one accepted). Commands for one
 * address are processed one at a time in arrival order, by whichever node
 * owns the address's partition.
 *
 * Every command carries an idempotency key (the caller's, or a fresh one), so
 * the transport may repeat a delivery while it looks for the owner without a
 * second effect.
 */
export class ActorSystem {
  readonly host: ActorHost;
  readonly coordinator: PartitionCoordinator;
  private started = false;

  constructor(
    readonly settings: ActorSystemSettings,
    readonly deps: ActorSystemDeps,
    makeTransport: (host: ActorHost) => ActorTransport,
  ) {
    const log = deps.log ?? silentLogger;
    const observer = deps.metrics ? metricsObserver(deps.metrics) : undefined;
    this.host = new ActorHost({
      partitions: settings.partitions,
      mailboxSize: settings.mailboxSize,
      idleMs: settings.idleMs,
      ownership: { fenceFor: (p) => this.coordinator.fenceFor(p) },
      clock: deps.clock ?? systemClock,
      log,
      observer,
      onOwnershipLost: (fence) => this.coordinator.ownershipLost(fence),
    });
    this.transport = makeTransport(this.host);
    this.coordinator = new PartitionCoordinator({
      nodeId: settings.nodeId,
      partitions: settings.partitions,
      leaseMs: settings.leaseMs,
      probeMs: settings.probeMs ?? 0,
      leases: deps.store,
      host: this.host,
      listener: this.transport,
      log: log.child({ component: 'placement', node: settings.nodeId }),
    });
    if (deps.metrics) registerGauges(deps.metrics, this);
  }

  private readonly transport: ActorTransport;

  get store(): ActorStateStore {
    return this.deps.store;
  }

  /** Registers an actor type; do it before `start`. */
  register(type: string, factory: ActorFactory): void {
    this.host.register(type, factory);
  }

  /** Joins the cluster (or, embedded, takes every partition). */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await this.coordinator.start();
  }

  /** Hands every partition over (finishing accepted commands) and stops. */
  async stop(): Promise<void> {
    await this.coordinator.stop();
    await this.host.stop();
    await this.transport.close();
  }

  /** Sends `command` to the actor at `address` and resolves with its reply. */
  ask(address: ActorAddress, command: unknown, opts: AskOptions = {}): Promise<unknown> {
    return this.transport.send(
      { type: address.type, key: address.key, command, idempotencyKey: opts.idempotencyKey ?? randomUUID() },
      opts.timeoutMs ?? this.settings.askTimeoutMs,
    );
  }

  /** Resolves once `command` is accepted into the actor's mailbox; its result is not awaited. */
  async tell(address: ActorAddress, command: unknown, opts: AskOptions = {}): Promise<void> {
    await this.transport.send(
      { type: address.type, key: address.key, command, idempotencyKey: opts.idempotencyKey ?? randomUUID(), tell: true },
      opts.timeoutMs ?? this.settings.askTimeoutMs,
    );
  }

  /** A typed handle on one actor type: `ask` infers the reply from the command's kind. */
  client<C extends Command, Replies extends { [K in C['kind']]: unknown }>(type: string): ActorClient<C, Replies> {
    return {
      ask: (key, command, opts) => this.ask({ type, key }, command, opts) as never,
      tell: (key, command, opts) => this.tell({ type, key }, command, opts),
    };
  }
}

export interface ActorClient<C extends Command, Replies extends { [K in C['kind']]: unknown }> {
  ask<T extends C>(key: string, command: T, opts?: AskOptions): Promise<Replies[T['kind']]>;
  tell(key: string, command: C, opts?: AskOptions): Promise<void>;
}

function metricsObserver(metrics: MetricsRegistry): CommandObserver {
  const h = metrics.histogram('switchboard_actor_command_duration_seconds', 'Time an actor spent processing one command, by actor type and outcome.', ['type', 'outcome']);
  return { commandDone: (type, ms, outcome) => h.observe({ type, outcome }, ms / 1000) };
}

function registerGauges(metrics: MetricsRegistry, system: ActorSystem): void {
  metrics.gauge('switchboard_actors_active', 'Actors in memory on this node.', () => system.host.stats().actors);
  metrics.gauge('switchboard_actor_mailbox_depth', 'Commands waiting in the mailboxes of this node (all actors).', () => system.host.stats().mailboxDepth);
  metrics.gauge('switchboard_actor_mailbox_depth_max', 'Commands waiting in the fullest mailbox of this node.', () => system.host.stats().maxMailboxDepth);
  metrics.gauge('switchboard_actor_partitions_owned', 'Partitions this node owns.', () => system.coordinator.ownedPartitions().length);
  metrics.gauge('switchboard_actor_cluster_members', 'Live nodes seen at the last placement tick.', () => system.coordinator.liveMembers().length);
  const evicted = metrics.counter('switchboard_actor_members_evicted_total', 'Nodes this node evicted because their NATS connection was gone (before their lease ran out).');
  system.coordinator.onEvict = () => evicted.inc();
}

/** Embedded mode: one node, in-process delivery, state in the embedded store. */
export function createEmbeddedActorSystem(settings: ActorSystemSettings, deps: ActorSystemDeps): ActorSystem {
  return new ActorSystem(settings, deps, (host) => new InProcessTransport(host));
}

/** Clustered mode: commands travel over NATS to the partition's owner; state and leases in Redis. */
export function createClusteredActorSystem(
  settings: ActorSystemSettings,
  deps: ActorSystemDeps & { nats: NatsConnection; prefix: string },
): ActorSystem {
  return new ActorSystem(settings, deps, (host) =>
    new NatsActorTransport({ nc: deps.nats, prefix: deps.prefix, host, attemptTimeoutMs: settings.attemptTimeoutMs, log: deps.log }),
  );
}

/** The runtime's settings from the parsed config. Without NODE_ID, a node id unique to this process. */
export function actorSettingsFromConfig(cfg: Config): ActorSystemSettings {
  return {
    nodeId: cfg.NODE_ID ?? `${hostname().replace(/[^a-zA-Z0-9_.-]/g, '-').slice(0, 40)}-${process.pid}-${randomBytes(3).toString('hex')}`,
    partitions: cfg.ACTOR_PARTITIONS,
    leaseMs: cfg.ACTOR_LEASE_MS,
    mailboxSize: cfg.ACTOR_MAILBOX_SIZE,
    idleMs: cfg.ACTOR_IDLE_MS,
    askTimeoutMs: cfg.ACTOR_ASK_TIMEOUT_MS,
    attemptTimeoutMs: cfg.ACTOR_ATTEMPT_TIMEOUT_MS,
    probeMs: cfg.ACTOR_PROBE_MS,
  };
}
