import type { ConversationClient } from '../conversations/index.js';
import type { Clock } from '../clock.js';
import type { ConversationRecord } from '../domain/conversation.js';
import { routingOf, type ChannelRouting } from '../domain/routing.js';
import type { Team } from '../domain/teams.js';
import type { DomainEvent, EventLog, EventSubscription } from '../events/types.js';
import type { Logger } from '../log.js';
import type { AssignmentStore } from '../store/assignment/port.js';
import type { ConversationIndexRepo } from '../store/conversations/port.js';

export interface AutoAssignerDeps {
  index: Pick<ConversationIndexRepo, 'list' | 'assignedCounts'>;
  /** The organization's channels with their routing; a conversation's channel is the one whose phone number id (a web chat: id) ends its audienceExternalId. */
  channels(organizationId: string): Promise<{ id: string; phoneNumberId?: string; routing?: ChannelRouting }[]>;
  teams(organizationId: string): Promise<Team[]>;
  /** Who is online now (connected, chose online, active). */
  online(organizationId: string): Promise<string[]>;
  /** The agents' own capacities (users with one set); an agent not in it has no limit of their own. */
  capacities(organizationId: string): Promise<Map<string, number>>;
  store: AssignmentStore;
  /** The one way to the contacts' conversation actors. */
  conversations: ConversationClient;
  events: EventLog;
  clock: Clock;
  log: Logger;
  /** Durable consumer name on the event log (default `auto-assign`). */
  consumerName?: string;
}

/** Events after which a queue may have someone to go to: a conversation queued or moved, capacity freed. */
const TRIGGERS = ['handover.requested', 'conversation.team_assigned', 'conversation.resolved', 'handover.opened', 'conversation.assigned'];
/** Queued conversations one round looks at. */
const BATCH = 500;
/** A busy lock (another node is assigning) is tried again after this long, so what changed meanwhile is seen. */
const BUSY_RETRY_MS = 250;

/** How a queued conversation is handed out: to whom (a team's members or anyone), and up to what load. */
interface Policy {
  pool: ((userId: string) => boolean) | null;
  capacity: number | null;
}

/**
 * Auto-assignment: queued conversations of a channel (`routing.autoAssign`)
 * or team (`autoAssign`) that opted in go to online agents, round-robin
 * (the one given a conversation longest ago first), skipping those who hold
 * `capacity` open conversations already (the smaller of the queue's policy
 * and the agent's own capacity). A conversation that finds nobody
 * waits in the queue and is tried again when something changes.
 *
 * Guarantees:
 * - Each conversation goes to exactly one agent, on any number of nodes:
 *   the assignment is a command of the conversation's actor that only acts
 *   while the conversation is still queued where the assigner saw it, so a
 *   racing assigner, or an agent's take, leaves it with whoever came first.
 * - Capacity holds across nodes: agents are picked and their loads counted
 *   under the organization's lock (Redis clustered, in-process embedded);
 *   the loads are read from the conversation index, which each assignment
 *   has updated before its command answers, and counted on by the holder
 *   for what it gives out itself. A holder that loses its lock (stalled past
 *   its expiry) stops before its next pick.
 * - It is tried again after every conversation queued or moved to a team,
 *   resolved, handed back or assigned (a durable consumer of the event log
 *   shared by the nodes), and whenever an agent becomes available (they
 *   choose online, or their socket's presence lease is taken or renewed,
 *   every 20 s, on the node that holds it): a queue waiting for somebody is
 *   served as soon as somebody is there.
 * - Another organization's agents are never considered: every step reads
 *   one organization's conversations, teams, channels and presence.
 */
export class AutoAssigner {
  private sub: EventSubscription | null = null;
  private readonly running = new Map<string, { again: boolean; done: Promise<void> }>();
  private readonly retries = new Map<string, NodeJS.Timeout>();
  private stopped = false;

  constructor(private readonly d: AutoAssignerDeps) {}

  async start(): Promise<void> {
    this.sub ??= await this.d.events.consume(this.d.consumerName ?? 'auto-assign', (e) => this.handle(e), { concurrency: 8, types: TRIGGERS });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.retries.values()) clearTimeout(t);
    this.retries.clear();
    await this.sub?.stop();
    this.sub = null;
    await Promise.all([...this.running.values()].map((r) => r.done.catch(() => undefined)));
  }

  /** One of the TRIGGERS (the log delivers no other type here). */
  private async handle(e: DomainEvent): Promise<void> {
    await this.kick(e.organizationId);
  }

  /** Serves the organization's queue now (one round at a time per node; a kick during a round runs one more after it). */
  kick(organizationId: string): Promise<void> {
    const cur = this.running.get(organizationId);
    if (cur !== undefined) {
      cur.again = true;
      return cur.done;
    }
    const entry = { again: false, done: Promise.resolve() };
    entry.done = (async () => {
      try {
        do {
          entry.again = false;
          if (this.stopped) return;
          await this.round(organizationId);
        } while (entry.again);
      } finally {
        this.running.delete(organizationId);
      }
    })();
    this.running.set(organizationId, entry);
    return entry.done;
  }

  /** The same as `kick`, for listeners that cannot wait: failures are logged. */
  nudge(organizationId: string): void {
    this.kick(organizationId).catch((err: unknown) => this.d.log.warn('auto-assignment round failed', { organizationId, err }));
  }

  private async round(org: string): Promise<void> {
    const queued = await this.d.index.list({ organizationId: org, status: 'queued', offset: 0, limit: BATCH });
    if (queued.conversations.length === 0) return;
    const [channels, teams] = await Promise.all([this.d.channels(org), this.d.teams(org)]);
    const policies = this.policies(channels, teams);
    const waiting = queued.conversations.map((c) => ({ c, policy: policies(c) })).filter((w): w is { c: ConversationRecord; policy: Policy } => w.policy !== null);
    if (waiting.length === 0) return;
    const online = await this.d.online(org);
    if (online.length === 0) return;
    const own = await this.d.capacities(org);
    const r = await this.d.store.withLock(org, (held) => this.assign(org, waiting, online, own, held));
    if (r === 'busy') this.retryLater(org);
  }

  /** The policy of each conversation: null when neither its team nor its channel opted in. */
  private policies(channels: { id: string; phoneNumberId?: string; routing?: ChannelRouting }[], teams: Team[]): (c: ConversationRecord) => Policy | null {
    const bySuffix = new Map<string, ChannelRouting>();
    for (const ch of channels) {
      bySuffix.set(ch.id, routingOf(ch));
      if (ch.phoneNumberId !== undefined) bySuffix.set(ch.phoneNumberId, routingOf(ch));
    }
    const teamById = new Map(teams.map((t) => [t.id, t]));
    return (c) => {
      const routing = bySuffix.get(c.audienceExternalId.slice(c.audienceExternalId.indexOf(':') + 1));
      const team = c.teamId ? teamById.get(c.teamId) : undefined;
      const members = team === undefined ? null : new Set(team.memberIds);
      const pool = members === null ? null : (u: string) => members.has(u);
      if (team?.autoAssign.enabled) return { pool, capacity: team.autoAssign.capacity };
      if (routing?.autoAssign.enabled) return { pool, capacity: routing.autoAssign.capacity };
      return null;
    };
  }

  private async assign(org: string, waiting: { c: ConversationRecord; policy: Policy }[], online: string[], own: Map<string, number>, held: () => Promise<boolean>): Promise<void> {
    // Read under the lock: what earlier holders gave out is in the index by now.
    const [loads, last] = await Promise.all([this.d.index.assignedCounts(org), this.d.store.lastAssigned(org)]);
    const limit = (policy: Policy, u: string): number => Math.min(policy.capacity ?? Infinity, own.get(u) ?? Infinity);
    for (const { c, policy } of waiting) {
      const candidates = online
        .filter((u) => (policy.pool === null || policy.pool(u)) && (loads.get(u) ?? 0) < limit(policy, u))
        .sort((a, b) => (last.get(a) ?? 0) - (last.get(b) ?? 0) || a.localeCompare(b));
      const agentId = candidates[0];
      if (agentId === undefined || c.contactId === null) continue;
      if (!(await held())) return;
      // From the conversation index: the canonical id.
      const reply = await this.d.conversations.askPlaced(org, c.audienceExternalId, { kind: 'handover.auto_assign', contactId: c.contactId, agentId, teamId: c.teamId ?? null });
      if (!reply.success) continue;
      loads.set(agentId, (loads.get(agentId) ?? 0) + 1);
      const at = Math.max(this.d.clock.now(), ...last.values()) + 1;
      last.set(agentId, at);
      await this.d.store.noteAssigned(org, agentId, at);
    }
  }

  private retryLater(org: string): void {
    if (this.stopped || this.retries.has(org)) return;
    const t = setTimeout(() => {
      this.retries.delete(org);
      this.nudge(org);
    }, BUSY_RETRY_MS);
    t.unref();
    this.retries.set(org, t);
  }
}
