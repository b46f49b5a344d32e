import { randomBytes } from 'node:crypto';
import { conflict } from '../../errors.js';
import { TICKET_PRIORITIES, type ApiKeyRecord, type Contact, type Organization, type Ticket, type User } from '../../domain/types.js';
import { canonicalTicket, formatTicketId } from '../../domain/ticket-rules.js';
import { getEach, LuaScript, orgKeys, type RedisClient } from '../redis/client.js';
import type { DomainEvent } from '../../domain/events.js';
import type { NewTicket, Store, TicketEventStamp, TicketPage, TicketQuery } from './port.js';
import { createRedisAuthSessionRepo, createRedisFailureCounter } from '../auth/index.js';

/*
 * Key layout (prefix `sb` by default). Everything of one organization carries
 * the `{o:<org>}` hash tag, so a ticket, its indexes and its outbox entry
 * change together in one script, also on Redis Cluster.
 *
 *   sb:orgs                          set of organization ids
 *   sb:org:<id>                      organization JSON
 *   sb:apikey:<sha256>               API key record JSON (global: looked up by hash)
 *   sb:meta:<key>                    service metadata
 *   sb:{o:<org>}:user:<id>           user JSON
 *   sb:{o:<org>}:users               hash email -> user id
 *   sb:user-email:<email>            set of `<org>/<user id>` with this email (sign-in; global)
 *   sb:{o:<org>}:apikeys             hash key id -> sha256
 *   sb:{o:<org>}:contact:<aeid>      contact JSON
 *   sb:{o:<org>}:contact-ids         hash contact id -> audienceExternalId
 *   sb:{o:<org>}:ticket-seq          counter behind ticketId
 *   sb:{o:<org>}:ticket:<ticketId>   ticket JSON (+ seq, version)
 *   sb:{o:<org>}:tix                 zset of all ticketIds, score = seq
 *   sb:{o:<org>}:tix:s:<status>      zset per status
 *   sb:{o:<org>}:tix:c:<contactId>   zset per contact
 *   sb:{o:<org>}:tix:a:<userId|->    zset per assignee ('-' = unassigned)
 *   sb:{o:<org>}:tix:p:<priority>    zset per priority
 *   sb:{o:<org>}:tix:p-ready         set once the priority sets hold every ticket (they came later than the others)
 *   sb:{o:<org>}:ticket-idem:<key>   {f: body fingerprint, t: ticketId} of an idempotent create (PX TTL)
 *   sb:{o:<org>}:outbox              list of event JSON waiting for the relay, oldest first
 *   sb:{o:<org>}:outbox-lease        which node relays this organization's outbox (PX lease)
 *   sb:outbox-orgs                   set of organizations whose outbox may hold entries (a hint, see below)
 *
 * Keys outside an organization's slot (the global ones above) are only ever
 * touched by single-key commands, never inside a script or next to another
 * slot's key: Redis Cluster refuses those (CROSSSLOT). Where a change spans
 * such keys, it is written in an order that leaves nothing a reader trusts
 * half-done: an index entry first, the record it points at second, and
 * readers skip entries whose record is missing.
 *
 * `outbox-orgs` is written after the ticket script committed (SADD), and an
 * organization leaves it only when its outbox is empty (SREM, then LLEN
 * again and SADD back if a write slipped in). A node that dies between its
 * commit and its SADD leaves an outbox nobody listed; the relay's sweep also
 * looks at every organization's outbox once a minute (FULL_SWEEP_MS), which
 * finds it.
 */

type StoredTicket = Ticket & { seq: number; version: number };

/*
 * A new ticket: its record (KEYS[1], sequence drawn beforehand by INCR), its
 * indexes (KEYS[first]..) and its event in the outbox (KEYS[2]), one step.
 * ARGV: ticket JSON, seq, ticketId, event JSON.
 */
const createTicketLua = (first: number) => `
redis.call('SET', KEYS[1], ARGV[1])
for i = ${first}, #KEYS do redis.call('ZADD', KEYS[i], ARGV[2], ARGV[3]) end
redis.call('RPUSH', KEYS[2], ARGV[4])
`;

const createTicketScript = new LuaScript(`${createTicketLua(3)}
return 1
`);

// createTicketScript behind an idempotency record (KEYS[3]; ARGV[5] fingerprint, ARGV[6] TTL ms); the index keys start at 4.
const createTicketOnceScript = new LuaScript(`
local prev = redis.call('GET', KEYS[3])
if prev then
  local r = cjson.decode(prev)
  if r.f == ARGV[5] then return {1, r.t} end
  return {2, r.t}
end
${createTicketLua(4)}
redis.call('SET', KEYS[3], cjson.encode({f = ARGV[5], t = ARGV[3]}), 'PX', ARGV[6])
return {0, ARGV[3]}
`);

const updateTicketScript = new LuaScript(`
local cur = redis.call('GET', KEYS[1])
if not cur then return -1 end
local t = cjson.decode(cur)
if tostring(t.version) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
local n = tonumber(ARGV[3])
for i = 3, 2 + n do redis.call('ZREM', KEYS[i], ARGV[4]) end
for i = 3 + n, #KEYS do redis.call('ZADD', KEYS[i], ARGV[5], ARGV[4]) end
redis.call('RPUSH', KEYS[2], ARGV[6])
return 1
`);

// Removes relayed entries by value (event JSON is unique: it carries the
// event id); answers how many are left.
const removeOutboxScript = new LuaScript(`
for i = 1, #ARGV do redis.call('LREM', KEYS[1], 1, ARGV[i]) end
return redis.call('LLEN', KEYS[1])
`);

const claimLeaseScript = new LuaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return 0
`);

const releaseLeaseScript = new LuaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
`);

const listTicketsScript = new LuaScript(`
local sets = {}
for i = 6, #KEYS do sets[#sets + 1] = KEYS[i] end
if ARGV[1] == '1' then
  redis.call('ZUNIONSTORE', KEYS[2], 2, KEYS[4], KEYS[5])
  sets[#sets + 1] = KEYS[2]
end
local src = KEYS[3]
if #sets == 1 then
  src = sets[1]
elseif #sets > 1 then
  local args = {'ZINTERSTORE', KEYS[1], #sets}
  for _, s in ipairs(sets) do args[#args + 1] = s end
  args[#args + 1] = 'AGGREGATE'
  args[#args + 1] = 'MAX'
  redis.call(unpack(args))
  src = KEYS[1]
end
local total = redis.call('ZCARD', src)
local offset = tonumber(ARGV[2])
local ids = redis.call('ZREVRANGE', src, offset, offset + tonumber(ARGV[3]) - 1)
redis.call('DEL', KEYS[1], KEYS[2])
local out = {total}
for _, id in ipairs(ids) do out[#out + 1] = id end
return out
`);

// The global email index is written before, by a command of its own (it is outside the organization's slot).
const createUserScript = new LuaScript(`
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('SET', KEYS[2], ARGV[3])
return 1
`);

// Compare-and-set of a user record: the write happens only if nobody changed it since the read.
const updateUserScript = new LuaScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1
`);

const EMAIL_INDEX_META = 'user-email-index-v1';

// Writes the contact unless one is stored (then returns that one): SET NX GET is the read and the write in one.
const upsertContactScript = new LuaScript(`
local cur = redis.call('SET', KEYS[1], ARGV[1], 'NX', 'GET')
if cur then return cur end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
return ARGV[1]
`);

const nameContactScript = new LuaScript(`
local cur = redis.call('GET', KEYS[1])
if not cur then return false end
local c = cjson.decode(cur)
if c.name ~= nil and c.name ~= cjson.null then return cur end
c.name = ARGV[1]
local out = cjson.encode(c)
redis.call('SET', KEYS[1], out)
return out
`);

// KEYS[1]: the key record (found through the organization's index beforehand).
const revokeKeyScript = new LuaScript(`
local cur = redis.call('GET', KEYS[1])
if not cur then return false end
local rec = cjson.decode(cur)
if rec.revokedAt == cjson.null or rec.revokedAt == nil then rec.revokedAt = ARGV[1] end
local out = cjson.encode(rec)
redis.call('SET', KEYS[1], out)
return out
`);

const touchKeyScript = new LuaScript(`
local cur = redis.call('GET', KEYS[1])
if not cur then return 0 end
local rec = cjson.decode(cur)
rec.lastUsedAt = ARGV[1]
redis.call('SET', KEYS[1], cjson.encode(rec))
return 1
`);

// Adds tickets (KEYS[n+1]..) to their priority set (KEYS[1..n], in the order of
// ARGV). Reading the ticket inside the script keeps it right against an update
// running meanwhile: updates move tickets between these sets themselves.
const indexPrioritiesScript = new LuaScript(`
local n = #ARGV
for i = n + 1, #KEYS do
  local raw = redis.call('GET', KEYS[i])
  if raw then
    local t = cjson.decode(raw)
    for j = 1, n do
      if ARGV[j] == t.priority then redis.call('ZADD', KEYS[j], t.seq, t.ticketId) end
    end
  end
end
return 1
`);

const MAX_UPDATE_ATTEMPTS = 20;
const PRIORITY_BACKFILL_BATCH = 200;
/** How often `pendingOrganizations` also looks at every organization's outbox (see the key layout). */
const FULL_SWEEP_MS = 60_000;

/** The stored record and the event of a new ticket with its drawn sequence. */
function newTicketRecord(ticket: NewTicket, seq: number, stamp: TicketEventStamp): { stored: StoredTicket; event: DomainEvent } {
  const ticketId = formatTicketId(new Date(ticket.createdAt), seq);
  const stored: StoredTicket = { ...ticket, ticketId, seq, version: 1 };
  return { stored, event: { ...stamp, organizationId: ticket.organizationId, data: canonicalTicket({ ...ticket, ticketId }) } };
}

function toTicket(raw: string): Ticket {
  return canonicalTicket(JSON.parse(raw) as StoredTicket);
}

export interface RedisStoreOptions {
  /** Whether `close()` closes the client too (default true); false when the client is the node's, shared with other stores. */
  closeClient?: boolean;
}

/** Redis adapter of the store ports. Multi-key changes are Lua scripts within one organization's slot. */
export function createRedisStore(client: RedisClient, prefix = 'sb', opts: RedisStoreOptions = {}): Store {
  const k = (orgId: string) => orgKeys(prefix, orgId);
  const emailKey = (email: string) => `${prefix}:user-email:${email.toLowerCase()}`;
  // Users stored before the email index existed are added to it once per deployment.
  let emailIndexReady: Promise<void> | undefined;
  const ensureEmailIndex = () =>
    (emailIndexReady ??= (async () => {
      if ((await client.get(`${prefix}:meta:${EMAIL_INDEX_META}`)) !== null) return;
      for (const orgId of await client.sMembers(`${prefix}:orgs`)) {
        const key = k(orgId);
        for (const [email, id] of Object.entries(await client.hGetAll(key('users')))) await client.sAdd(emailKey(email), `${orgId}/${id}`);
      }
      await client.set(`${prefix}:meta:${EMAIL_INDEX_META}`, new Date().toISOString());
    })().catch((e: unknown) => {
      emailIndexReady = undefined;
      throw e;
    }));
  const pendingKey = `${prefix}:outbox-orgs`;
  let lastFullSweep = 0;
  const markPending = async (orgId: string) => {
    await client.sAdd(pendingKey, orgId);
  };
  // Tickets written before the priority sets existed join them the first time an organization filters by priority.
  const prioritiesReady = new Set<string>();
  const ensurePriorityIndex = async (orgId: string) => {
    if (prioritiesReady.has(orgId)) return;
    const key = k(orgId);
    if ((await client.exists(key('tix', 'p-ready'))) === 0) {
      const sets = TICKET_PRIORITIES.map((p) => key('tix', 'p', p));
      for (let from = 0; ; from += PRIORITY_BACKFILL_BATCH) {
        const ids = await client.zRange(key('tix'), from, from + PRIORITY_BACKFILL_BATCH - 1);
        if (ids.length > 0) await indexPrioritiesScript.run(client, [...sets, ...ids.map((id) => key('ticket', id))], [...TICKET_PRIORITIES]);
        if (ids.length < PRIORITY_BACKFILL_BATCH) break;
      }
      await client.set(key('tix', 'p-ready'), new Date().toISOString());
    }
    prioritiesReady.add(orgId);
  };
  const indexKeys = (orgId: string, t: Pick<Ticket, 'status' | 'priority' | 'audienceId' | 'assigneeId'>) => {
    const key = k(orgId);
    const keys = [key('tix'), key('tix', 's', t.status), key('tix', 'p', t.priority), key('tix', 'a', t.assigneeId ?? '-')];
    if (t.audienceId !== null) keys.push(key('tix', 'c', t.audienceId));
    return keys;
  };

  return {
    kind: 'redis',
    organizations: {
      async create(org: Organization) {
        // Record first, then the set that lists it (two slots, so two commands).
        await client.set(`${prefix}:org:${org.id}`, JSON.stringify(org));
        await client.sAdd(`${prefix}:orgs`, org.id);
      },
      async get(id) {
        const raw = await client.get(`${prefix}:org:${id}`);
        return raw === null ? null : (JSON.parse(raw) as Organization);
      },
      async list() {
        const ids = await client.sMembers(`${prefix}:orgs`);
        if (ids.length === 0) return [];
        const raws = await getEach(client, ids.map((id) => `${prefix}:org:${id}`));
        return raws
          .filter((r): r is string => r !== null)
          .map((r) => JSON.parse(r) as Organization)
          .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
      },
    },
    users: {
      async create(user: User) {
        const key = k(user.organizationId);
        // The sign-in index first: an entry whose user is missing is skipped by findByEmail, a user missing from it could not sign in.
        const ref = `${user.organizationId}/${user.id}`;
        await client.sAdd(emailKey(user.email), ref);
        const ok = await createUserScript.run(client, [key('users'), key('user', user.id)], [user.email.toLowerCase(), user.id, JSON.stringify(user)]);
        if (ok === 0) {
          await client.sRem(emailKey(user.email), ref);
          throw conflict('email_taken', 'a user with this email exists in the organization');
        }
      },
      async get(organizationId, id) {
        const raw = await client.get(k(organizationId)('user', id));
        return raw === null ? null : (JSON.parse(raw) as User);
      },
      async list(organizationId) {
        const key = k(organizationId);
        const ids = Object.values(await client.hGetAll(key('users')));
        if (ids.length === 0) return [];
        const raws = await client.mGet(ids.map((id) => key('user', id)));
        return raws.filter((r): r is string => r !== null).map((r) => JSON.parse(r) as User);
      },
      async update(organizationId, id, change) {
        const key = k(organizationId)('user', id);
        for (let attempt = 0; attempt < MAX_UPDATE_ATTEMPTS; attempt++) {
          const raw = await client.get(key);
          if (raw === null) return null;
          const current = JSON.parse(raw) as User;
          const next = { ...change(current), id: current.id, organizationId: current.organizationId, email: current.email };
          if ((await updateUserScript.run(client, [key], [raw, JSON.stringify(next)])) === 1) return next;
        }
        throw conflict('concurrent_update', 'the user is being changed by others; try again');
      },
      async findByEmail(email) {
        await ensureEmailIndex();
        const refs = await client.sMembers(emailKey(email));
        if (refs.length === 0) return [];
        const raws = await getEach(client, refs.map((ref) => k(ref.slice(0, ref.indexOf('/')))('user', ref.slice(ref.indexOf('/') + 1))));
        return raws.filter((r): r is string => r !== null).map((r) => JSON.parse(r) as User);
      },
    },
    apiKeys: {
      async create(rec: ApiKeyRecord) {
        // Index first, record second: the key works only once it is listed (so it can be revoked).
        await client.hSet(k(rec.organizationId)('apikeys'), rec.id, rec.hash);
        await client.set(`${prefix}:apikey:${rec.hash}`, JSON.stringify(rec));
      },
      async getByHash(hash) {
        const raw = await client.get(`${prefix}:apikey:${hash}`);
        return raw === null ? null : (JSON.parse(raw) as ApiKeyRecord);
      },
      async list(organizationId) {
        const hashes = Object.values(await client.hGetAll(k(organizationId)('apikeys')));
        if (hashes.length === 0) return [];
        const raws = await getEach(client, hashes.map((h) => `${prefix}:apikey:${h}`));
        return raws
          .filter((r): r is string => r !== null)
          .map((r) => JSON.parse(r) as ApiKeyRecord)
          .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
      },
      async revoke(organizationId, id, at) {
        // The record lives outside the organization's slot (it is found by hash): its index is read first.
        const hash = await client.hGet(k(organizationId)('apikeys'), id);
        if (hash === null || hash === undefined) return null;
        const out = await revokeKeyScript.run(client, [`${prefix}:apikey:${hash}`], [at]);
        return typeof out === 'string' ? (JSON.parse(out) as ApiKeyRecord) : null;
      },
      async touch(hash, at) {
        await touchKeyScript.run(client, [`${prefix}:apikey:${hash}`], [at]);
      },
    },
    contacts: {
      async upsert(contact: Contact) {
        const key = k(contact.organizationId);
        const out = await upsertContactScript.run(
          client,
          [key('contact', contact.audienceExternalId), key('contact-ids')],
          [JSON.stringify(contact), contact.id, contact.audienceExternalId],
        );
        return JSON.parse(String(out)) as Contact;
      },
      async get(organizationId, audienceExternalId) {
        const raw = await client.get(k(organizationId)('contact', audienceExternalId));
        return raw === null ? null : (JSON.parse(raw) as Contact);
      },
      async setNameIfMissing(organizationId, audienceExternalId, name) {
        const raw = await nameContactScript.run(client, [k(organizationId)('contact', audienceExternalId)], [name]);
        return raw === null || raw === undefined ? null : (JSON.parse(String(raw)) as Contact);
      },
      async getById(organizationId, id) {
        const aeid = await client.hGet(k(organizationId)('contact-ids'), id);
        if (aeid === null || aeid === undefined) return null;
        const raw = await client.get(k(organizationId)('contact', aeid));
        return raw === null ? null : (JSON.parse(raw) as Contact);
      },
      async list(organizationId) {
        const key = k(organizationId);
        const aeids = Object.values(await client.hGetAll(key('contact-ids')));
        if (aeids.length === 0) return [];
        const raws = await client.mGet(aeids.map((a) => key('contact', a)));
        return raws.filter((r): r is string => r !== null).map((r) => JSON.parse(r) as Contact);
      },
    },
    tickets: {
      async create(ticket: NewTicket, stamp) {
        const key = k(ticket.organizationId);
        const seq = Number(await client.incr(key('ticket-seq')));
        const { stored, event } = newTicketRecord(ticket, seq, stamp);
        await createTicketScript.run(
          client,
          [key('ticket', stored.ticketId), key('outbox'), ...indexKeys(ticket.organizationId, ticket)],
          [JSON.stringify(stored), seq, stored.ticketId, JSON.stringify(event)],
        );
        await markPending(ticket.organizationId);
        return canonicalTicket(stored);
      },
      async createOnce(ticket: NewTicket, stamp, idem) {
        const key = k(ticket.organizationId);
        const known = await client.get(key('ticket-idem', idem.key));
        // A repeat answers from the record without drawing a sequence; the script checks again for racing firsts.
        const seq = known === null ? Number(await client.incr(key('ticket-seq'))) : 0;
        let code: number;
        let ticketId: string;
        if (known !== null) {
          const r = JSON.parse(known) as { f: string; t: string };
          [code, ticketId] = [r.f === idem.fingerprint ? 1 : 2, r.t];
        } else {
          const { stored, event } = newTicketRecord(ticket, seq, stamp);
          [code, ticketId] = (await createTicketOnceScript.run(
            client,
            [key('ticket', stored.ticketId), key('outbox'), key('ticket-idem', idem.key), ...indexKeys(ticket.organizationId, ticket)],
            [JSON.stringify(stored), seq, stored.ticketId, JSON.stringify(event), idem.fingerprint, idem.ttlMs],
          )) as [number, string];
          code = Number(code);
          if (code === 0) await markPending(ticket.organizationId);
        }
        if (code === 2) return { outcome: 'reused' };
        const raw = await client.get(key('ticket', ticketId));
        if (raw === null) throw new Error(`ticket ${ticketId} of an idempotency record is missing`);
        return { outcome: code === 0 ? 'created' : 'replayed', ticket: toTicket(raw) };
      },
      async get(organizationId, ticketId) {
        const raw = await client.get(k(organizationId)('ticket', ticketId));
        return raw === null ? null : toTicket(raw);
      },
      async update(organizationId, ticketId, change, stamp) {
        const key = k(organizationId)('ticket', ticketId);
        for (let attempt = 0; attempt < MAX_UPDATE_ATTEMPTS; attempt++) {
          const raw = await client.get(key);
          if (raw === null) return null;
          const stored = JSON.parse(raw) as StoredTicket;
          const next = change(toTicket(raw));
          if (next === null) return null;
          const oldIdx = indexKeys(organizationId, stored);
          const newIdx = indexKeys(organizationId, next);
          const removed = oldIdx.filter((x) => !newIdx.includes(x));
          const added = newIdx.filter((x) => !oldIdx.includes(x));
          const body: StoredTicket = { ...next, seq: stored.seq, version: stored.version + 1 };
          const event: DomainEvent = { ...stamp, organizationId, data: canonicalTicket(next) };
          const ok = await updateTicketScript.run(
            client,
            [key, k(organizationId)('outbox'), ...removed, ...added],
            [stored.version, JSON.stringify(body), removed.length, ticketId, stored.seq, JSON.stringify(event)],
          );
          if (ok === 1) {
            await markPending(organizationId);
            return next;
          }
          if (ok === -1) return null;
        }
        throw conflict('concurrent_update', 'the ticket is being changed by others; try again');
      },
      async list(q: TicketQuery): Promise<TicketPage> {
        const key = k(q.organizationId);
        // An assignee filter decides visibility by itself: unassigned and the agent's own are visible, others' are not.
        let vis = q.visibleToAgent;
        if (q.assigneeId !== undefined && vis !== undefined) {
          if (q.assigneeId !== null && q.assigneeId !== vis) return { tickets: [], total: 0 };
          vis = undefined;
        }
        const tmp = randomBytes(8).toString('hex');
        const filters: string[] = [];
        if (q.status !== undefined) filters.push(key('tix', 's', q.status));
        if (q.priority !== undefined) {
          await ensurePriorityIndex(q.organizationId);
          filters.push(key('tix', 'p', q.priority));
        }
        if (q.audienceId !== undefined) filters.push(key('tix', 'c', q.audienceId));
        if (q.assigneeId !== undefined) filters.push(key('tix', 'a', q.assigneeId ?? '-'));
        const out = (await listTicketsScript.run(
          client,
          [key('tmp', tmp, 'i'), key('tmp', tmp, 'v'), key('tix'), key('tix', 'a', vis ?? '-'), key('tix', 'a', '-'), ...filters],
          [vis === undefined ? '0' : '1', q.offset, q.limit],
        )) as [number, ...string[]];
        const [total, ...ids] = out;
        // One slot: a same-slot MGET is fine on Redis Cluster.
        const raws = ids.length === 0 ? [] : await client.mGet(ids.map((id) => key('ticket', id)));
        return { total: Number(total), tickets: raws.filter((r): r is string => r !== null).map(toTicket) };
      },
    },
    outbox: {
      async pendingOrganizations() {
        const now = Date.now();
        if (now - lastFullSweep >= FULL_SWEEP_MS) {
          lastFullSweep = now;
          const orgs = await client.sMembers(`${prefix}:orgs`);
          const lengths = await Promise.all(orgs.map((org) => client.lLen(k(org)('outbox'))));
          const stranded = orgs.filter((_, i) => lengths[i]! > 0);
          if (stranded.length > 0) await client.sAdd(pendingKey, stranded);
        }
        return client.sMembers(pendingKey);
      },
      async peek(organizationId, limit) {
        const raws = await client.lRange(k(organizationId)('outbox'), 0, limit - 1);
        return raws.map((raw) => ({ event: JSON.parse(raw) as DomainEvent, handle: raw }));
      },
      async remove(organizationId, handles) {
        if (handles.length === 0) return;
        const outbox = k(organizationId)('outbox');
        const left = Number(await removeOutboxScript.run(client, [outbox], handles));
        if (left > 0) return;
        // Emptied: unlisted, unless a write slipped in between (its own SADD may have come before our SREM).
        await client.sRem(pendingKey, organizationId);
        if ((await client.lLen(outbox)) > 0) await client.sAdd(pendingKey, organizationId);
      },
      async claim(organizationId, owner, ttlMs) {
        return (await claimLeaseScript.run(client, [k(organizationId)('outbox-lease')], [owner, ttlMs])) === 1;
      },
      async release(organizationId, owner) {
        await releaseLeaseScript.run(client, [k(organizationId)('outbox-lease')], [owner]);
      },
    },
    sessions: createRedisAuthSessionRepo(client, prefix),
    authFailures: createRedisFailureCounter(client, prefix),
    meta: {
      async get(key) {
        return client.get(`${prefix}:meta:${key}`);
      },
      async setIfAbsent(key, value) {
        return (await client.set(`${prefix}:meta:${key}`, value, { NX: true })) === 'OK';
      },
      async set(key, value) {
        await client.set(`${prefix}:meta:${key}`, value);
      },
    },
    async isEmpty() {
      return (await client.exists(`${prefix}:orgs`)) === 0;
    },
    async ping() {
      await client.ping();
    },
    async close() {
      if ((opts.closeClient ?? true) && client.isOpen) await client.close();
    },
  };
}
