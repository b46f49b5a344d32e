import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { OutboxRelay, type DomainEvent, type EventPublisher } from '../../src/events/index.js';
import { silentLogger } from '../../src/log.js';
import { createPostgresStore, createSqliteStore, openNodeDbIn, type OutboxRepo, type PgDb, type Store, type TicketEventStamp } from '../../src/store/index.js';
import { useRedisClients } from '../harness/use-servers.js';
import { usePostgres } from '../harness/use-postgres.js';

/** A publisher that records what it was given, and can be told to fail. */
class RecordingPublisher implements EventPublisher {
  readonly published: DomainEvent[] = [];
  failNext = 0;
  async publish(event: DomainEvent): Promise<void> {
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error('log unavailable');
    }
    this.published.push(event);
  }
}

const base = () => {
  const at = new Date().toISOString();
  return { _id: randomUUID(), title: 't', description: 'd', status: 'open' as const, priority: 'low' as const, assigneeId: null, audienceId: null, audienceExternalId: null, organizationId: 'o1', resolutionDate: null, createdBy: null, createdAt: at, updatedAt: at };
};
const stamp = (type: TicketEventStamp['type']): TicketEventStamp => ({ id: randomUUID(), type, createdAt: new Date().toISOString() });

async function until(cond: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const relays: OutboxRelay[] = [];
function relay(outbox: OutboxRepo, events: EventPublisher, owner: string, opts: { sweepMs?: number; leaseMs?: number } = {}): OutboxRelay {
  const r = new OutboxRelay(outbox, events, silentLogger, { owner, sweepMs: opts.sweepMs ?? 60_000, leaseMs: opts.leaseMs });
  relays.push(r);
  r.start();
  return r;
}
afterEach(async () => {
  await Promise.all(relays.splice(0).map((r) => r.stop()));
});

describe('OutboxRelay (embedded store)', () => {
  let store: Store;
  afterEach(async () => {
    await store?.close();
  });

  it('publishes the events of a create and an update after they commit, then empties the outbox', async () => {
    store = createSqliteStore(await openNodeDbIn(null));
    const log = new RecordingPublisher();
    const r = relay(store.outbox, log, 'a');
    const created = stamp('ticket.created');
    const t = await store.tickets.create(base(), created);
    r.kick('o1');
    await r.idle();
    const updated = stamp('ticket.updated');
    const u = await store.tickets.update('o1', t.ticketId, (c) => ({ ...c, status: 'resolved' }), updated);
    r.kick('o1');
    await r.idle();
    expect(log.published).toEqual([
      { ...created, organizationId: 'o1', data: t },
      { ...updated, organizationId: 'o1', data: u },
    ]);
    expect(await store.outbox.peek('o1', 10)).toEqual([]);
    expect(await store.outbox.pendingOrganizations()).toEqual([]);
  });

  it('re-publishes the same event id when a relay dies after publishing but before removing', async () => {
    store = createSqliteStore(await openNodeDbIn(null));
    const log = new RecordingPublisher();
    // The first relay's removal never happens, as if its node died right after the publish.
    const crashing: OutboxRepo = { ...store.outbox, remove: () => Promise.reject(new Error('node died')) };
    const first = relay(crashing, log, 'a');
    const created = stamp('ticket.created');
    await store.tickets.create(base(), created);
    first.kick('o1');
    await first.idle();
    expect(log.published.map((e) => e.id)).toEqual([created.id]);
    expect((await store.outbox.peek('o1', 10)).map((e) => e.event.id)).toEqual([created.id]);

    // The next relay (a restart) finds the entry in its first sweep.
    relay(store.outbox, log, 'b');
    await until(async () => (await store.outbox.peek('o1', 10)).length === 0);
    expect(log.published.map((e) => e.id)).toEqual([created.id, created.id]);
  });

  it('keeps an event whose publish failed and publishes it on a later sweep', async () => {
    store = createSqliteStore(await openNodeDbIn(null));
    const log = new RecordingPublisher();
    log.failNext = 1;
    const r = relay(store.outbox, log, 'a', { sweepMs: 50 });
    const created = stamp('ticket.created');
    await store.tickets.create(base(), created);
    r.kick('o1');
    await until(() => log.published.length === 1);
    expect(log.published[0]!.id).toBe(created.id);
    await until(async () => (await store.outbox.peek('o1', 10)).length === 0);
  });
});

describe('OutboxRelay (clustered store, two nodes)', () => {
  const { client } = useRedisClients();
  const postgres = usePostgres();
  const dbs = new Map<string, Promise<PgDb>>();
  // Two nodes: one database (per case), a Redis client each.
  const open = async (prefix: string) => {
    if (!dbs.has(prefix)) dbs.set(prefix, postgres.open());
    return createPostgresStore(await dbs.get(prefix)!, await client(), { prefix });
  };

  it("sweeps a dead node's entries once its lease lapses, and never relays an organization leased by a live node", async () => {
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const deadNode = await open(prefix);
    const liveNode = await open(prefix);
    // The dead node committed a ticket and took the relay lease, then died before relaying.
    const created = stamp('ticket.created');
    await deadNode.tickets.create(base(), created);
    expect(await deadNode.outbox.claim('o1', 'dead', 1500)).toBe(true);
    expect(await liveNode.outbox.claim('o1', 'live', 1500)).toBe(false);

    const log = new RecordingPublisher();
    const r = relay(liveNode.outbox, log, 'live', { sweepMs: 50 });
    r.kick('o1');
    await r.idle();
    expect(log.published).toEqual([]); // still leased by the dead node
    await until(() => log.published.length === 1);
    expect(log.published[0]!.id).toBe(created.id);
    await until(async () => (await liveNode.outbox.pendingOrganizations()).length === 0);
    expect(await liveNode.outbox.peek('o1', 10)).toEqual([]);
    // The relay released its lease when done.
    expect(await deadNode.outbox.claim('o1', 'other', 800)).toBe(true);
  });
});
