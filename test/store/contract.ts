import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store, TicketEventStamp, TicketQuery } from '../../src/store/index.js';
import type { Ticket, TicketStatus } from '../../src/domain/types.js';
import { TICKET_ID_PATTERN } from '../../src/domain/ticket-rules.js';
import { TEXT_SEARCH_TOTAL_CAP } from '../../src/store/core/ticket-query.js';

const now = () => new Date().toISOString();

function newTicket(orgId: string, over: Partial<Ticket> = {}): Omit<Ticket, 'ticketId'> {
  const t = now();
  return {
    _id: randomUUID(),
    title: 'Printer on fire',
    description: 'It is on fire',
    status: 'open',
    priority: 'medium',
    assigneeId: null,
    audienceId: null,
    audienceExternalId: null,
    organizationId: orgId,
    resolutionDate: null,
    createdBy: null,
    createdAt: t,
    updatedAt: t,
    ...over,
  };
}

const stamp = (type: TicketEventStamp['type'] = 'ticket.created'): TicketEventStamp => ({ id: randomUUID(), type, createdAt: now() });

/** One suite, run against every Store adapter. */
export function runStoreContract(name: string, create: () => Promise<Store>): void {
  describe(`store contract: ${name}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await create();
    });
    afterEach(async () => {
      await store.close();
    });

    it('is empty at first and creates, gets and lists organizations', async () => {
      expect(await store.isEmpty()).toBe(true);
      const org = { id: randomUUID(), name: 'Acme', createdAt: now() };
      await store.organizations.create(org);
      expect(await store.isEmpty()).toBe(false);
      expect(await store.organizations.get(org.id)).toEqual(org);
      expect(await store.organizations.get(randomUUID())).toBeNull();
      expect((await store.organizations.list()).map((o) => o.id)).toEqual([org.id]);
    });

    it('refuses a second user with the same email in one organization, not across organizations', async () => {
      const user = { id: randomUUID(), organizationId: 'o1', email: 'Ann@x.io', name: 'Ann', role: 'admin' as const, passwordHash: 'h', createdAt: now() };
      await store.users.create(user);
      await expect(store.users.create({ ...user, id: randomUUID(), email: 'ann@x.io' })).rejects.toMatchObject({ code: 'email_taken', status: 409 });
      await store.users.create({ ...user, id: randomUUID(), organizationId: 'o2' });
      expect(await store.users.get('o1', user.id)).toEqual(user);
      expect(await store.users.get('o2', user.id)).toBeNull();
      expect(await store.users.list('o1')).toHaveLength(1);
    });

    it('stores API keys by hash, revokes and touches them, scoped to the organization', async () => {
      const rec = { id: randomUUID(), organizationId: 'o1', userId: 'u1', name: 'k', hash: 'a'.repeat(64), prefix: 'org_abc', scopes: ['tickets:read'], createdAt: now(), revokedAt: null, lastUsedAt: null };
      await store.apiKeys.create(rec);
      expect(await store.apiKeys.getByHash(rec.hash)).toEqual(rec);
      expect(await store.apiKeys.revoke('o2', rec.id, now())).toBeNull();
      expect((await store.apiKeys.getByHash(rec.hash))?.revokedAt).toBeNull();
      const at = now();
      await store.apiKeys.touch(rec.hash, at);
      expect((await store.apiKeys.getByHash(rec.hash))?.lastUsedAt).toBe(at);
      const revoked = await store.apiKeys.revoke('o1', rec.id, at);
      expect(revoked?.revokedAt).toBe(at);
      expect((await store.apiKeys.getByHash(rec.hash))?.revokedAt).toBe(at);
      expect(await store.apiKeys.list('o1')).toHaveLength(1);
      expect(await store.apiKeys.list('o2')).toHaveLength(0);
    });

    it('upserts contacts once and finds them by external id and id, per organization', async () => {
      const c = { id: randomUUID(), organizationId: 'o1', audienceExternalId: '4915112345678:1000', name: null, createdAt: now() };
      expect(await store.contacts.upsert(c)).toEqual(c);
      expect(await store.contacts.upsert({ ...c, id: randomUUID() })).toEqual(c);
      expect(await store.contacts.get('o1', c.audienceExternalId)).toEqual(c);
      expect(await store.contacts.get('o2', c.audienceExternalId)).toBeNull();
      expect(await store.contacts.getById('o1', c.id)).toEqual(c);
      expect(await store.contacts.getById('o2', c.id)).toBeNull();
      expect(await store.contacts.list('o1')).toHaveLength(1);
    });

    it('gives tickets unique T-<digits>-<digits> ids and lists newest first with totals and pages', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) ids.push((await store.tickets.create(newTicket('o1', { title: `t${i}` }), stamp())).ticketId);
      for (const id of ids) expect(id).toMatch(TICKET_ID_PATTERN);
      expect(new Set(ids).size).toBe(7);
      const page1 = await store.tickets.list({ organizationId: 'o1', offset: 0, limit: 3 });
      expect(page1.total).toBe(7);
      expect(page1.tickets.map((t) => t.title)).toEqual(['t6', 't5', 't4']);
      const page3 = await store.tickets.list({ organizationId: 'o1', offset: 6, limit: 3 });
      expect(page3.tickets.map((t) => t.title)).toEqual(['t0']);
      expect((await store.tickets.list({ organizationId: 'o2', offset: 0, limit: 10 })).total).toBe(0);
      const got = await store.tickets.get('o1', ids[0]!);
      expect(got).toMatchObject({ ticketId: ids[0], title: 't0', organizationId: 'o1', assigneeId: null });
      expect(Object.keys(got!).sort()).toEqual(Object.keys(newTicket('x')).concat('ticketId').sort());
      expect(await store.tickets.get('o2', ids[0]!)).toBeNull();
    });

    it('filters by status, contact and agent visibility, and keeps indexes right after updates', async () => {
      const mk = (status: TicketStatus, audienceId: string | null, assigneeId: string | null) =>
        store.tickets.create(newTicket('o1', { status, audienceId, assigneeId, title: `${status}/${audienceId}/${assigneeId}` }), stamp());
      const a = await mk('open', 'c1', null);
      await mk('open', 'c2', 'agent1');
      await mk('resolved', 'c1', 'agent2');
      await mk('in_progress', null, 'agent1');
      const titles = async (q: Partial<Parameters<Store['tickets']['list']>[0]>) =>
        (await store.tickets.list({ organizationId: 'o1', offset: 0, limit: 100, ...q })).tickets.map((t) => t.title).sort();

      expect(await titles({ status: 'open' })).toEqual(['open/c1/null', 'open/c2/agent1']);
      expect(await titles({ audienceId: 'c1' })).toEqual(['open/c1/null', 'resolved/c1/agent2']);
      expect(await titles({ audienceId: 'c1', status: 'resolved' })).toEqual(['resolved/c1/agent2']);
      expect(await titles({ visibleToAgent: 'agent1' })).toEqual(['in_progress/null/agent1', 'open/c1/null', 'open/c2/agent1']);
      expect(await titles({ visibleToAgent: 'agent1', status: 'open', audienceId: 'c2' })).toEqual(['open/c2/agent1']);

      const updated = await store.tickets.update('o1', a.ticketId, (t) => ({ ...t, status: 'closed', assigneeId: 'agent2' }), stamp('ticket.updated'));
      expect(updated?.status).toBe('closed');
      expect(await titles({ status: 'open' })).toEqual(['open/c2/agent1']);
      expect(await titles({ status: 'closed' })).toEqual(['open/c1/null']);
      expect(await titles({ visibleToAgent: 'agent1' })).toEqual(['in_progress/null/agent1', 'open/c2/agent1']);
      const list = await store.tickets.list({ organizationId: 'o1', status: 'closed', offset: 0, limit: 5 });
      expect(list.total).toBe(1);
      expect(list.tickets[0]).toEqual(updated);
    });

    it('filters by priority and assignee, alone and with the other filters, newest first with exact totals, also after updates', async () => {
      const org = randomUUID();
      const mk = (i: number, priority: Ticket['priority'], assigneeId: string | null, status: TicketStatus = 'open') =>
        store.tickets.create(newTicket(org, { title: `t${i}`, priority, assigneeId, status, audienceId: i % 2 ? 'c1' : null }), stamp());
      const t0 = await mk(0, 'high', null);
      await mk(1, 'low', 'ann');
      await mk(2, 'high', 'ann');
      await mk(3, 'urgent', 'bob', 'resolved');
      await mk(4, 'high', 'bob');
      await mk(5, 'high', null, 'closed');
      const list = (q: Partial<Parameters<Store['tickets']['list']>[0]>) => store.tickets.list({ organizationId: org, offset: 0, limit: 100, ...q });
      const titles = async (q: Partial<Parameters<Store['tickets']['list']>[0]>) => {
        const page = await list(q);
        const all = page.tickets.map((t) => t.title);
        expect(page.total, JSON.stringify(q)).toBe(all.length);
        return all;
      };

      expect(await titles({ priority: 'high' })).toEqual(['t5', 't4', 't2', 't0']);
      expect(await titles({ priority: 'medium' })).toEqual([]);
      expect(await titles({ assigneeId: 'ann' })).toEqual(['t2', 't1']);
      expect(await titles({ assigneeId: null })).toEqual(['t5', 't0']);
      expect(await titles({ assigneeId: 'nobody-here' })).toEqual([]);
      expect(await titles({ priority: 'high', assigneeId: 'bob' })).toEqual(['t4']);
      expect(await titles({ priority: 'high', status: 'open' })).toEqual(['t4', 't2', 't0']);
      expect(await titles({ priority: 'high', audienceId: 'c1' })).toEqual(['t5']);
      expect(await titles({ priority: 'low', audienceId: 'c1', assigneeId: 'ann', status: 'open' })).toEqual(['t1']);
      // An agent asking for another agent's tickets sees none; for their own or the unassigned, all of those.
      expect(await titles({ visibleToAgent: 'ann', assigneeId: 'bob' })).toEqual([]);
      expect(await titles({ visibleToAgent: 'ann', assigneeId: 'ann' })).toEqual(['t2', 't1']);
      expect(await titles({ visibleToAgent: 'ann', assigneeId: null, priority: 'high' })).toEqual(['t5', 't0']);
      expect(await titles({ visibleToAgent: 'ann', priority: 'high' })).toEqual(['t5', 't2', 't0']);

      // Paging within a filter: newest first, the total of the whole filter on every page.
      const p1 = await list({ priority: 'high', offset: 0, limit: 3 });
      const p2 = await list({ priority: 'high', offset: 3, limit: 3 });
      expect([p1.total, p2.total]).toEqual([4, 4]);
      expect([...p1.tickets, ...p2.tickets].map((t) => t.title)).toEqual(['t5', 't4', 't2', 't0']);

      await store.tickets.update(org, t0.ticketId, (t) => ({ ...t, priority: 'low', assigneeId: 'bob' }), stamp('ticket.updated'));
      expect(await titles({ priority: 'high' })).toEqual(['t5', 't4', 't2']);
      expect(await titles({ priority: 'low' })).toEqual(['t1', 't0']);
      expect(await titles({ assigneeId: 'bob' })).toEqual(['t4', 't3', 't0']);
      expect(await titles({ assigneeId: null })).toEqual(['t5']);
      // Another organization's tickets never match.
      await store.tickets.create(newTicket(randomUUID(), { priority: 'high', assigneeId: 'ann' }), stamp());
      expect(await titles({ priority: 'high', assigneeId: 'ann' })).toEqual(['t2']);
    });

    it('pages by position (keyset): each page continues after the last, tickets created meanwhile do not shift it, with the filters and the full total', async () => {
      const org = randomUUID();
      const made: string[] = [];
      for (let i = 0; i < 5; i++) made.push((await store.tickets.create(newTicket(org, { status: i % 2 ? 'open' : 'closed', title: `k${i}` }), stamp())).ticketId);
      const first = await store.tickets.list({ organizationId: org, offset: 0, limit: 2 });
      expect(first.tickets.map((t) => t.title)).toEqual(['k4', 'k3']);
      expect(first.total).toBe(5);
      // A new ticket arrives: the next page is what came after, not shifted by one.
      await store.tickets.create(newTicket(org, { title: 'k5' }), stamp());
      const second = await store.tickets.list({ organizationId: org, offset: 0, limit: 2, before: first.next! });
      expect(second.tickets.map((t) => t.title)).toEqual(['k2', 'k1']);
      expect(second.total).toBe(6);
      const third = await store.tickets.list({ organizationId: org, offset: 0, limit: 2, before: second.next! });
      expect(third.tickets.map((t) => t.title)).toEqual(['k0']);
      expect(third.next).toBeNull();
      const closed = await store.tickets.list({ organizationId: org, status: 'closed', offset: 0, limit: 1 });
      const closedNext = await store.tickets.list({ organizationId: org, status: 'closed', offset: 0, limit: 5, before: closed.next! });
      expect([...closed.tickets, ...closedNext.tickets].map((t) => t.title)).toEqual(['k4', 'k2', 'k0']);
      expect(closedNext.total).toBe(3);
      expect((await store.tickets.list({ organizationId: randomUUID(), offset: 0, limit: 5, before: first.next! })).tickets).toEqual([]);
    });

    it('applies concurrent updates of one ticket without losing any', async () => {
      const t = await store.tickets.create(newTicket('o1', { description: '' }), stamp());
      await Promise.all(
        Array.from({ length: 15 }, (_, i) => store.tickets.update('o1', t.ticketId, (cur) => ({ ...cur, description: cur.description + `[${i}]` }), stamp('ticket.updated'))),
      );
      const final = await store.tickets.get('o1', t.ticketId);
      for (let i = 0; i < 15; i++) expect(final!.description).toContain(`[${i}]`);
    });

    it('returns null when updating a missing or foreign ticket, and when the change aborts', async () => {
      const t = await store.tickets.create(newTicket('o1'), stamp());
      expect(await store.tickets.update('o2', t.ticketId, (c) => c, stamp('ticket.updated'))).toBeNull();
      expect(await store.tickets.update('o1', 'T-1-1', (c) => c, stamp('ticket.updated'))).toBeNull();
      expect(await store.tickets.update('o1', t.ticketId, () => null, stamp('ticket.updated'))).toBeNull();
    });

    it('records each ticket change and its event in the outbox together, in order, per organization', async () => {
      const created = stamp();
      const t = await store.tickets.create(newTicket('o1'), created);
      const updatedStamp = stamp('ticket.updated');
      const updated = await store.tickets.update('o1', t.ticketId, (c) => ({ ...c, status: 'resolved' }), updatedStamp);
      await store.tickets.create(newTicket('o2'), stamp());
      // Aborted or missing changes record nothing.
      expect(await store.tickets.update('o1', t.ticketId, () => null, stamp('ticket.updated'))).toBeNull();
      expect(await store.tickets.update('o1', 'T-000101-000099', (c) => c, stamp('ticket.updated'))).toBeNull();

      expect((await store.outbox.pendingOrganizations()).sort()).toEqual(['o1', 'o2']);
      const entries = await store.outbox.peek('o1', 10);
      expect(entries.map((e) => e.event)).toEqual([
        { ...created, organizationId: 'o1', data: t },
        { ...updatedStamp, organizationId: 'o1', data: updated },
      ]);
      expect(await store.outbox.peek('o1', 1)).toHaveLength(1);

      // Removing an entry leaves the others; an emptied organization is no longer pending.
      await store.outbox.remove('o1', [entries[0]!.handle]);
      expect((await store.outbox.peek('o1', 10)).map((e) => e.event.id)).toEqual([updatedStamp.id]);
      await store.outbox.remove('o1', [entries[1]!.handle]);
      expect(await store.outbox.peek('o1', 10)).toEqual([]);
      expect(await store.outbox.pendingOrganizations()).toEqual(['o2']);
    });

    it("records a ticket's creation, each change by its actor and each comment in its activity, in order, with the comment's event; never another organization's", async () => {
      const ann = { kind: 'session' as const, userId: 'ann', keyId: null, keyName: null };
      const bot = { kind: 'api_key' as const, userId: 'bob', keyId: 'k1', keyName: 'bot' };
      const t = await store.tickets.create(newTicket('o1', { createdBy: bot }), stamp());
      const other = await store.tickets.create(newTicket('o2'), stamp());
      await store.tickets.update('o1', t.ticketId, (c) => ({ ...c, status: 'in_progress', title: 'Printer smoking', updatedAt: '2026-01-02T00:00:00.000Z' }), stamp('ticket.updated'), ann);
      // A change of nothing the activity follows records no entry; an aborted one neither.
      await store.tickets.update('o1', t.ticketId, (c) => ({ ...c, updatedAt: '2026-01-03T00:00:00.000Z' }), stamp('ticket.updated'), ann);
      await store.tickets.update('o1', t.ticketId, () => null, stamp('ticket.updated'), ann);
      const commentEvent = randomUUID();
      const done = await store.tickets.comment('o1', t.ticketId, { id: 'c1', text: 'Called them', actor: ann, at: '2026-01-04T00:00:00.000Z' }, commentEvent, () => true);
      expect(done?.entry).toEqual({ id: 'c1', ticketId: t.ticketId, organizationId: 'o1', kind: 'comment', actor: ann, at: '2026-01-04T00:00:00.000Z', text: 'Called them' });
      expect(done?.ticket.title).toBe('Printer smoking');
      // Refused by the caller's visibility, on a missing ticket and across organizations: nothing written.
      expect(await store.tickets.comment('o1', t.ticketId, { id: 'c2', text: 'x', actor: ann, at: now() }, randomUUID(), () => false)).toBeNull();
      expect(await store.tickets.comment('o1', 'T-000101-000099', { id: 'c3', text: 'x', actor: ann, at: now() }, randomUUID(), () => true)).toBeNull();
      expect(await store.tickets.comment('o2', t.ticketId === other.ticketId ? 'T-000101-000098' : t.ticketId, { id: 'c4', text: 'x', actor: ann, at: now() }, randomUUID(), () => true)).toBeNull();

      const all = await store.tickets.activity('o1', t.ticketId, 0, 100);
      expect(all.next).toBeNull();
      expect(all.entries.map((e) => e.kind)).toEqual(['created', 'changed', 'comment']);
      expect(all.entries[0]).toMatchObject({ ticketId: t.ticketId, organizationId: 'o1', actor: bot, at: t.createdAt });
      expect(all.entries[1]).toMatchObject({
        actor: ann,
        at: '2026-01-02T00:00:00.000Z',
        changes: [
          { field: 'subject', from: 'Printer on fire', to: 'Printer smoking' },
          { field: 'status', from: 'open', to: 'in_progress' },
        ],
      });
      expect(new Set(all.entries.map((e) => e.id)).size).toBe(3);

      // Pages: each continues after the last, and an entry written later comes after the last cursor.
      const first = await store.tickets.activity('o1', t.ticketId, 0, 2);
      expect(first.entries.map((e) => e.kind)).toEqual(['created', 'changed']);
      const second = await store.tickets.activity('o1', t.ticketId, first.next!, 2);
      expect(second.entries.map((e) => e.id)).toEqual(['c1']);
      expect(second.next).toBeNull();
      await store.tickets.comment('o1', t.ticketId, { id: 'c5', text: 'Fixed', actor: null, at: now() }, randomUUID(), () => true);
      expect((await store.tickets.activity('o1', t.ticketId, first.next!, 10)).entries.map((e) => e.id)).toEqual(['c1', 'c5']);

      // Another organization's activity: its own ticket only, never o1's.
      expect((await store.tickets.activity('o2', t.ticketId, 0, 10)).entries.every((e) => e.organizationId === 'o2')).toBe(true);
      expect((await store.tickets.activity('o2', other.ticketId, 0, 10)).entries.map((e) => e.kind)).toEqual(['created']);

      const events = (await store.outbox.peek('o1', 100)).map((e) => e.event);
      const commented = events.find((e) => e.id === commentEvent);
      expect(commented).toMatchObject({ type: 'ticket.commented', organizationId: 'o1', data: { comment: done!.entry, ticket: done!.ticket } });
      expect(events.filter((e) => e.type === 'ticket.commented')).toHaveLength(2);
    });

    it('keeps one activity entry for each of concurrent changes and comments of one ticket', async () => {
      const t = await store.tickets.create(newTicket('o1', { description: '' }), stamp());
      await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          i % 2 === 0
            ? store.tickets.update('o1', t.ticketId, (cur) => ({ ...cur, description: cur.description + `[${i}]` }), stamp('ticket.updated'), null)
            : store.tickets.comment('o1', t.ticketId, { id: `c${i}`, text: `comment ${i}`, actor: null, at: now() }, randomUUID(), () => true),
        ),
      );
      const { entries } = await store.tickets.activity('o1', t.ticketId, 0, 100);
      expect(entries).toHaveLength(9);
      expect(entries.filter((e) => e.kind === 'comment')).toHaveLength(4);
      // The changes chain: each one's "from" is the one before's "to".
      const descriptions = entries.filter((e) => e.kind === 'changed').map((e) => e.changes![0]!);
      for (let i = 1; i < descriptions.length; i++) expect(descriptions[i]!.from).toBe(descriptions[i - 1]!.to);
    });

    it('creates many tickets asked at once, of two organizations, each with its own number, counts, event and activity', async () => {
      const asked = Array.from({ length: 60 }, (_, i) => ({ org: i % 3 === 0 ? 'b1' : 'a1', status: i % 4 === 0 ? 'closed' : 'open', title: `t${i}`, stamp: stamp() }));
      const made = await Promise.all(asked.map((a) => store.tickets.create(newTicket(a.org, { title: a.title, status: a.status as Ticket['status'] }), a.stamp)));
      for (const org of ['a1', 'b1']) {
        const mine = made.filter((t) => t.organizationId === org);
        // Numbered 1..n in the organization, none twice, none skipped.
        expect(mine.map((t) => Number(t.ticketId.split('-').pop())).sort((x, y) => x - y)).toEqual(mine.map((_, i) => i + 1));
        const all = await store.tickets.list({ organizationId: org, offset: 0, limit: 100 });
        expect(all.total).toBe(mine.length);
        expect(new Set(all.tickets.map((t) => t.ticketId))).toEqual(new Set(mine.map((t) => t.ticketId)));
        const closed = await store.tickets.list({ organizationId: org, status: 'closed', offset: 0, limit: 100 });
        expect(closed.total).toBe(asked.filter((a) => a.org === org && a.status === 'closed').length);
        // Each ticket's event names it, under the id its request gave.
        const events = (await store.outbox.peek(org, 100)).map((e) => e.event);
        expect(events).toHaveLength(mine.length);
        for (const t of mine) {
          const a = asked[made.indexOf(t)]!;
          expect(t.title).toBe(a.title);
          const ev = events.find((e) => e.id === a.stamp.id)!;
          expect((ev.data as Ticket).ticketId).toBe(t.ticketId);
          expect((ev.data as Ticket).title).toBe(a.title);
          expect((await store.tickets.get(org, t.ticketId))?.title).toBe(a.title);
          const activity = await store.tickets.activity(org, t.ticketId, 0, 10);
          expect(activity.entries.map((e) => e.kind)).toEqual(['created']);
        }
      }
    });

    it('keeps every event of concurrent updates in the outbox exactly once', async () => {
      const t = await store.tickets.create(newTicket('o1', { description: '' }), stamp());
      const stamps = Array.from({ length: 10 }, () => stamp('ticket.updated'));
      await Promise.all(stamps.map((s, i) => store.tickets.update('o1', t.ticketId, (cur) => ({ ...cur, description: cur.description + `[${i}]` }), s)));
      const ids = (await store.outbox.peek('o1', 100)).map((e) => e.event.id);
      expect(ids).toHaveLength(11);
      expect(new Set(ids)).toEqual(new Set([...ids.slice(0, 1), ...stamps.map((s) => s.id)]));
    });

    it('creates one ticket per idempotency key, even when the requests race, with its event once; another body is reused', async () => {
      const org = randomUUID();
      const idem = { key: 'k:order-1', fingerprint: 'f1', ttlMs: 60_000 };
      const results = await Promise.all(Array.from({ length: 10 }, () => store.tickets.createOnce(newTicket(org), stamp(), idem)));
      const created = results.filter((r) => r.outcome === 'created');
      expect(created).toHaveLength(1);
      const ticketIds = new Set(results.map((r) => (r.outcome === 'reused' ? null : r.ticket.ticketId)));
      expect(ticketIds.size).toBe(1);
      expect((await store.tickets.list({ organizationId: org, offset: 0, limit: 100 })).total).toBe(1);
      expect(await store.outbox.peek(org, 100)).toHaveLength(1);
      expect(await store.tickets.createOnce(newTicket(org), stamp(), { ...idem, fingerprint: 'f2' })).toEqual({ outcome: 'reused' });
      // Keys are per organization.
      expect((await store.tickets.createOnce(newTicket(randomUUID()), stamp(), idem)).outcome).toBe('created');
    });

    it('forgets an idempotency key after its TTL', async () => {
      const org = randomUUID();
      const idem = { key: 'k:short', fingerprint: 'f1', ttlMs: 50 };
      const first = await store.tickets.createOnce(newTicket(org), stamp(), idem);
      await new Promise((r) => setTimeout(r, 120));
      const second = await store.tickets.createOnce(newTicket(org), stamp(), { ...idem, fingerprint: 'f2' });
      expect(second.outcome).toBe('created');
      expect(second.outcome === 'created' && first.outcome === 'created' && second.ticket.ticketId !== first.ticket.ticketId).toBe(true);
    });

    it('names a nameless contact once; a name already set stays', async () => {
      const org = randomUUID();
      await store.contacts.upsert({ id: 'c1', organizationId: org, audienceExternalId: '4915100000001:1', name: null, createdAt: now() });
      expect((await store.contacts.setNameIfMissing(org, '4915100000001:1', 'Ann'))?.name).toBe('Ann');
      expect((await store.contacts.setNameIfMissing(org, '4915100000001:1', 'Annie'))?.name).toBe('Ann');
      expect((await store.contacts.get(org, '4915100000001:1'))?.name).toBe('Ann');
      expect(await store.contacts.setNameIfMissing(org, '4915100000009:1', 'Nobody')).toBeNull();
      expect(await store.contacts.get(org, '4915100000009:1')).toBeNull();
    });

    it("links a person's ids once: a phone and a BSUID seen together lead to one contact; racing placements agree; other organizations see nothing", async () => {
      const org = randomUUID();
      const phone = '4915100000002:9';
      const bsuid = 'US.1349120865530274191:9';
      // Legacy: a contact known by its phone, from before ids were linked.
      await store.contacts.upsert({ id: 'c2', organizationId: org, audienceExternalId: phone, name: null, createdAt: now() });
      expect(await store.contacts.identify(org, [phone, bsuid])).toEqual({ canonical: phone, conflicting: [] });
      // A later BSUID-only message reaches the same person.
      expect(await store.contacts.identify(org, [bsuid])).toEqual({ canonical: phone, conflicting: [] });
      expect(await store.contacts.resolve(org, bsuid)).toBe(phone);
      expect((await store.contacts.get(org, bsuid))?.id).toBe('c2');
      expect(await store.contacts.aliasesOf(org, phone)).toEqual([phone, bsuid].sort());
      // Identity is noted on the canonical id only: an alias names no row of its own.
      expect(await store.contacts.noteIdentity(org, bsuid, { username: 'kim' }, 'Kim')).toBeNull();
      expect(await store.contacts.noteIdentity(org, phone, { userId: 'US.1349120865530274191', username: 'kim' }, 'Kim')).toMatchObject({ name: 'Kim', userId: 'US.1349120865530274191', username: 'kim' });
      expect((await store.contacts.noteIdentity(org, phone, { username: 'kim2' }, 'Other'))?.name).toBe('Kim');
      // Another organization: nothing of it.
      const other = randomUUID();
      expect(await store.contacts.resolve(other, bsuid)).toBe(bsuid);
      expect(await store.contacts.get(other, bsuid)).toBeNull();
      // Two placements of a new person at once (one with the BSUID only, one with both): one canonical id.
      const org2 = randomUUID();
      const p2 = '4915100000003:9';
      const u2 = 'US.777:9';
      const [a, b] = await Promise.all([store.contacts.identify(org2, [u2]), store.contacts.identify(org2, [p2, u2])]);
      expect(b).toEqual({ canonical: a.canonical, conflicting: [] });
      expect(await store.contacts.resolve(org2, u2)).toBe(a.canonical);
      expect(await store.contacts.resolve(org2, p2)).toBe(a.canonical);
      // Two known contacts named as one: not linked, the conflict said.
      const org3 = randomUUID();
      await store.contacts.identify(org3, ['4915100000004:9']);
      await store.contacts.identify(org3, ['US.888:9']);
      expect(await store.contacts.identify(org3, ['4915100000004:9', 'US.888:9'])).toEqual({ canonical: '4915100000004:9', conflicting: ['US.888:9'] });
      // Merged: every id of the loser leads to the winner's contact, once.
      await store.contacts.upsert({ id: 'w', organizationId: org3, audienceExternalId: '4915100000004:9', name: 'Mia', createdAt: now() });
      await store.contacts.upsert({ id: 'l', organizationId: org3, audienceExternalId: 'US.888:9', name: null, createdAt: now() });
      await store.contacts.identify(org3, ['US.888:9', 'US.889:9']);
      expect(await store.contacts.merge(org3, '4915100000004:9', 'US.888:9')).toBe(true);
      expect(await store.contacts.merge(org3, '4915100000004:9', 'US.888:9')).toBe(false);
      expect(await store.contacts.resolve(org3, 'US.888:9')).toBe('4915100000004:9');
      expect(await store.contacts.resolve(org3, 'US.889:9')).toBe('4915100000004:9');
      expect((await store.contacts.get(org3, 'US.888:9'))?.id).toBe('w');
      expect((await store.contacts.list(org3)).map((c) => c.id)).toEqual(['w']);
      expect(await store.contacts.identify(org3, ['4915100000004:9', 'US.888:9'])).toEqual({ canonical: '4915100000004:9', conflicting: [] });
    });

    it('lists tickets whose subject or description has every word of a text, with the other filters, never another organization\'s', async () => {
      const org = randomUUID();
      const t1 = await store.tickets.create(newTicket(org, { title: 'Drucker brennt', description: 'Im zweiten Stock qualmt es' }), stamp());
      const t2 = await store.tickets.create(newTicket(org, { title: 'Login', description: 'Cannot sign in after the printer update', assigneeId: 'ann' }), stamp());
      await store.tickets.create(newTicket(randomUUID(), { title: 'Drucker brennt', description: 'x' }), stamp());
      const ids = async (text: string, more: Partial<TicketQuery> = {}) => (await store.tickets.list({ organizationId: org, text, offset: 0, limit: 10, ...more })).tickets.map((t) => t.ticketId);
      expect(await ids('DRUCKER')).toEqual([t1.ticketId]);
      expect(await ids('qualmt stock')).toEqual([t1.ticketId]);
      expect(await ids('print')).toEqual([t2.ticketId]);
      expect(await ids('print', { visibleToAgent: 'bob' })).toEqual([]);
      expect(await ids('print', { visibleToAgent: 'ann' })).toEqual([t2.ticketId]);
      expect((await store.tickets.list({ organizationId: org, text: 'drucker', offset: 0, limit: 10 })).total).toBe(1);
      expect(await ids('"*')).toEqual([]);
      await store.tickets.update(org, t1.ticketId, (x) => ({ ...x, title: 'Printer on fire' }), stamp('ticket.updated'));
      expect(await ids('printer')).toEqual([t2.ticketId, t1.ticketId]);
    });

    it('counts a text search up to the cap (then `gte`); every other list exactly', async () => {
      const org = randomUUID();
      for (let i = 0; i < TEXT_SEARCH_TOTAL_CAP + 2; i += 50) {
        await Promise.all(Array.from({ length: Math.min(50, TEXT_SEARCH_TOTAL_CAP + 2 - i) }, (_, k) => store.tickets.create(newTicket(org, { title: `printer ${i + k}`, status: (i + k) % 2 ? 'open' : 'closed' }), stamp())));
      }
      const page = (more: Partial<TicketQuery>) => store.tickets.list({ organizationId: org, offset: 0, limit: 10, ...more });
      expect(await page({ text: 'printer' })).toMatchObject({ total: TEXT_SEARCH_TOTAL_CAP, totalRelation: 'gte' });
      expect((await page({ text: 'printer' })).tickets).toHaveLength(10);
      expect(await page({ text: 'printer 1001' })).toMatchObject({ total: 1, totalRelation: 'eq' });
      expect(await page({})).toMatchObject({ total: TEXT_SEARCH_TOTAL_CAP + 2, totalRelation: 'eq' });
      expect(await page({ status: 'open', assigneeId: null })).toMatchObject({ total: (TEXT_SEARCH_TOTAL_CAP + 2) / 2, totalRelation: 'eq' });
    });

    it('changes a contact by id: its name, and its attributes merged key by key, concurrent changes all kept; only in its organization', async () => {
      const org = randomUUID();
      await store.contacts.upsert({ id: 'c2', organizationId: org, audienceExternalId: '4915100000002:1', name: null, createdAt: now() });
      expect(await store.contacts.update(org, 'c2', { name: 'Ann', attributes: { plan: 'gold', city: 'Köln' } })).toMatchObject({ name: 'Ann', attributes: { plan: 'gold', city: 'Köln' } });
      await Promise.all(Array.from({ length: 10 }, (_, i) => store.contacts.update(org, 'c2', { attributes: { [`k${i}`]: String(i) } })));
      const after = await store.contacts.update(org, 'c2', { attributes: { city: null } });
      expect(after?.attributes).toEqual({ plan: 'gold', ...Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, String(i)])) });
      expect(await store.contacts.get(org, '4915100000002:1')).toEqual(after);
      expect((await store.contacts.update(org, 'c2', { name: null }))?.name).toBeNull();
      expect(await store.contacts.update(randomUUID(), 'c2', { name: 'Mallory' })).toBeNull();
      expect(await store.contacts.update(org, 'nope', { name: 'X' })).toBeNull();
    });

    it('sets meta values once with setIfAbsent, and replaces them with set', async () => {
      expect(await store.meta.get('x')).toBeNull();
      expect(await store.meta.setIfAbsent('x', '1')).toBe(true);
      expect(await store.meta.setIfAbsent('x', '2')).toBe(false);
      expect(await store.meta.get('x')).toBe('1');
      await store.meta.set('x', '3');
      expect(await store.meta.get('x')).toBe('3');
      expect(await store.meta.setIfAbsent('x', '4')).toBe(false);
    });

    it('answers ping', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });
  });
}
