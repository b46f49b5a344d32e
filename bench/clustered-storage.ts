/**
 * Clustered storage (PostgreSQL for records, Redis for what is bounded or
 * expires), on real postgres, redis-server and nats-server processes:
 *
 * Growth — one clustered node in this process with the sandbox network on.
 * 30 contacts are warmed with 110 template sends each (their actors then
 * remember as many idempotency keys as they ever will), Redis `used_memory`
 * is read once the rate limiter's 60 s window has passed, then every contact
 * gets BENCH_CS_MORE (default 100) more sends, and it is read again likewise:
 * the Redis bytes each further send adds (the baseline: about 2.4 KB per
 * send when every record lived in Redis), and one contact's own Redis
 * state (MEMORY USAGE of its actor key) after 300 sends.
 *
 * Scale — BENCH_CS_MESSAGES session messages (default 1,000,000; 100 per
 * contact, its conversation indexed) and BENCH_CS_TICKETS tickets (default
 * 200,000) are written through the PostgreSQL stores' own methods,
 * BENCH_CS_CONCURRENCY at a time (not over HTTP, for speed). A clustered
 * node then serves that data: Redis `used_memory` beside the same node's
 * with 10,000 messages; the database's size on disk; p50/p99 over HTTP
 * (sequential requests) of the ticket list, the conversation views (first
 * page, a page 50 cursors deep, the counts), `GET /v1/search` (message text
 * and contacts) and `GET /v1/tickets?q=`. PostgreSQL runs with its default
 * shared_buffers (128MB), as docker-compose.yml runs it.
 *
 *   BENCH_CS_MESSAGES=1000000 BENCH_CS_TICKETS=200000 npm run bench -- clustered-storage
 */
import { randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import { loadConfig } from '../src/config.js';
import { silentLogger } from '../src/log.js';
import { startServer, type RunningServer } from '../src/server.js';
import { createPostgresConversationIndex, createPostgresStore, PgDb, NODE_PG_MIGRATIONS } from '../src/store/index.js';
import { createPostgresSessionMessageRepo } from '../src/store/session-messages/postgres.js';
import type { SessionMessage } from '../src/domain/messages.js';
import { operatorApi, orgWithKey } from '../test/harness/operator-api.js';
import { startNats, startPostgres, startRedis, type PostgresProcess, type ServerProcess } from '../test/harness/servers.js';
import { clusterEnv } from '../test/harness/use-servers.js';

const OPERATOR = 'bench-operator-token-0123456789';
const MESSAGES = Number(process.env.BENCH_CS_MESSAGES ?? 1_000_000);
const TICKETS = Number(process.env.BENCH_CS_TICKETS ?? 200_000);
const MORE = Number(process.env.BENCH_CS_MORE ?? 100);
const CONCURRENCY = Number(process.env.BENCH_CS_CONCURRENCY ?? 32);
const WINDOW_WAIT_MS = Number(process.env.BENCH_CS_WINDOW_WAIT_MS ?? 62_000);

type Servers = { redis: ServerProcess; nats: ServerProcess; postgres: PostgresProcess };
type StatsClient = ReturnType<typeof createClient>;

async function usedMemory(r: StatsClient): Promise<number> {
  const info = String(await r.sendCommand(['INFO', 'memory']));
  return Number(/used_memory:(\d+)/.exec(info)![1]);
}

async function node(servers: Servers, prefix: string, extra: Record<string, string> = {}): Promise<RunningServer> {
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    OPERATOR_TOKEN: OPERATOR,
    LOG_LEVEL: 'silent',
    SEED_DEMO: 'false',
    SECRETS_KEY: 'b'.repeat(64),
    SANDBOX_NETWORK: 'true',
    SANDBOX_STATUS_DELAY_MS: '0',
    SANDBOX_MAX_MPS: '100000',
    TEMPLATE_RATE_LIMIT_PER_MINUTE: '1000000',
    NODE_ID: `cs-${prefix}`,
    ...clusterEnv(servers, prefix),
    ...extra,
  });
  return startServer(config, { log: silentLogger });
}

/** Runs `task(i)` for i in [0, n), `concurrency` at a time. */
async function pool(n: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < n; i = next++) await task(i);
    }),
  );
}

async function p99(n: number, fn: () => Promise<void>): Promise<{ p50: number; p99: number }> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(n * 0.5)]!, p99: times[Math.min(n - 1, Math.floor(n * 0.99))]! };
}

async function growth(servers: Servers, stats: StatsClient): Promise<void> {
  const running = await node(servers, 'growth');
  try {
    const base = running.url;
    const op = operatorApi(base, OPERATOR);
    const { orgId, key } = await orgWithKey(op, 'Growth', ['message:send']);
    const channel = await op(`/admin/v1/organizations/${orgId}/channels`, { kind: 'whatsapp_cloud', name: 'Growth', network: 'sandbox', messagesPerSecond: 10_000 });
    await op(`/admin/v1/organizations/${orgId}/credits/top-up`, { amount: 1_000_000_000 });
    const contacts = Array.from({ length: 30 }, (_, i) => String(4915200000000 + i));
    let failed = 0;
    const send = async (to: string, i: number) => {
      const r = await fetch(`${base}/v2/wa/template`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          channelId: channel.id,
          to,
          template: { name: 'order_update', language: { code: 'en_US', policy: 'deterministic' }, components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ann' }, { type: 'text', text: `g-${i}` }, { type: 'text', text: 'Monday' }] }] },
        }),
      });
      if (r.status < 200 || r.status >= 300) failed++;
      await r.arrayBuffer();
    };
    const round = async (perContact: number) => pool(contacts.length * perContact, 16, (i) => send(contacts[i % contacts.length]!, i));
    // Every status webhook handled, and the rate limiter's 60 s window (a sorted set of the window's hits) passed:
    // what stays is what the sends left for good.
    const settle = async () => new Promise((r) => setTimeout(r, WINDOW_WAIT_MS));
    await round(110);
    await settle();
    const m0 = await usedMemory(stats);
    await round(MORE);
    await settle();
    const m1 = await usedMemory(stats);
    await round(300 - 110 - MORE);
    await settle();
    // The contact's actor state: the key that names its audienceExternalId.
    const aeid = `${contacts[0]}:`;
    const keys = (await stats.keys('growth:*')).filter((k) => k.includes(aeid));
    const sizes = await Promise.all(keys.map(async (k) => [k, Number(await stats.sendCommand(['MEMORY', 'USAGE', k]))] as const));
    const sends = contacts.length * MORE;
    console.log(`\n## Clustered storage: Redis growth over sends to warmed contacts\n`);
    console.log('| measure | value |');
    console.log('|---|---:|');
    console.log(`| Redis used_memory after 30 contacts × 110 sends | ${(m0 / 1e6).toFixed(2)} MB |`);
    console.log(`| Redis bytes added per further send (${sends} sends) | ${((m1 - m0) / sends).toFixed(1)} |`);
    for (const [k, size] of sizes) console.log(`| MEMORY USAGE of ${k.replace(/[^:]+$/, '…')} after 300 sends | ${size} bytes |`);
    console.log(`| sends not answered 2xx | ${failed} |`);
  } finally {
    await running.close();
  }
}

async function scale(servers: Servers, stats: StatsClient): Promise<void> {
  const prefix = 'scale';
  const db = await PgDb.open(servers.postgres.url, { migrations: NODE_PG_MIGRATIONS, schema: prefix, poolSize: CONCURRENCY });
  const redis = createClient({ url: servers.redis.url });
  await redis.connect();
  try {
    const store = createPostgresStore(db, redis as never, { prefix });
    const messages = createPostgresSessionMessageRepo(db);
    const index = createPostgresConversationIndex(db);
    const orgId = `org_scale_${randomUUID().slice(0, 8)}`;
    const at = new Date().toISOString();
    await store.organizations.create({ id: orgId, name: 'Scale', createdAt: at });
    const words = ['invoice', 'delivery', 'refund', 'password', 'printer', 'café', 'order', 'tracking', 'address', 'payment', 'warranty', 'return'];
    const perContact = 100;
    const contacts = Math.max(1, Math.ceil(MESSAGES / perContact));
    const t0 = performance.now();
    await pool(contacts, CONCURRENCY, async (c) => {
      const aeid = `49160${String(c).padStart(8, '0')}:100200`;
      const sessionId = randomUUID();
      await messages.registerSession({ sessionId, organizationId: orgId, audienceExternalId: aeid, openedAt: at });
      for (let i = 0; i < perContact && c * perContact + i < MESSAGES; i++) {
        const n = c * perContact + i;
        const m: SessionMessage = {
          _id: `m_${n}_${sessionId.slice(0, 8)}`,
          sessionId,
          organizationId: orgId,
          channelId: 'ch_scale',
          audienceExternalId: aeid,
          direction: i % 2 === 0 ? 'inbound' : 'outbound',
          sender: i % 2 === 0 ? 'contact' : 'bot',
          content: { type: 'text', text: `About my ${words[n % words.length]} number ${n}: ${words[(n * 7) % words.length]} please, code${n % 100}` },
          sentAt: at,
          messageId: `wamid.scale${n}`,
        };
        await messages.append(m);
      }
      await index.put({ organizationId: orgId, audienceExternalId: aeid, contactId: null, status: c % 10 === 0 ? 'queued' : 'bot', assigneeId: null, queuedAt: c % 10 === 0 ? at : null, assignedAt: null, sessionId, sessionStatus: 'open', lastInboundAt: at, inboundCount: perContact / 2, updatedAt: new Date(Date.parse(at) + c).toISOString(), version: 1 });
    });
    const messageSeconds = (performance.now() - t0) / 1000;
    const t1 = performance.now();
    await pool(TICKETS, CONCURRENCY, async (i) => {
      await store.tickets.create(
        { _id: randomUUID(), title: `${words[i % words.length]} question ${i}`, description: `The customer asks about ${words[(i * 5) % words.length]}`.padEnd(400, '.'), status: i % 3 === 0 ? 'resolved' : 'open', priority: 'medium', assigneeId: null, audienceId: null, audienceExternalId: null, organizationId: orgId, resolutionDate: null, createdBy: null, createdAt: at, updatedAt: at },
        { id: randomUUID(), type: 'ticket.created', createdAt: at },
      );
    });
    await db.query('DELETE FROM outbox'); // the relay of a running node would have moved them to the log
    const ticketSeconds = (performance.now() - t1) / 1000;
    await db.query('VACUUM ANALYZE');
    const size = Number((await db.rows<{ s: string }>('SELECT pg_database_size(current_database()) AS s'))[0]!.s);
    const tables = await db.rows<{ t: string; s: string }>(
      `SELECT c.relname AS t, pg_total_relation_size(c.oid) AS s FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r' ORDER BY 2 DESC LIMIT 4`,
      [prefix],
    );

    // The small deployment, for Redis: a node on 10,000 messages.
    const smallPrefix = 'small';
    const small = await PgDb.open(servers.postgres.url, { migrations: NODE_PG_MIGRATIONS, schema: smallPrefix, poolSize: 4 });
    const smallMessages = createPostgresSessionMessageRepo(small);
    await pool(100, 8, async (c) => {
      const sessionId = randomUUID();
      const aeid = `49170${String(c).padStart(8, '0')}:100200`;
      await smallMessages.registerSession({ sessionId, organizationId: orgId, audienceExternalId: aeid, openedAt: at });
      for (let i = 0; i < 100; i++) await smallMessages.append({ _id: `s_${c}_${i}`, sessionId, organizationId: orgId, channelId: 'ch', audienceExternalId: aeid, direction: 'inbound', sender: 'contact', content: { type: 'text', text: 'hello' }, sentAt: at, messageId: null });
    });
    await small.close();
    const memoryWith = async (schema: string) => {
      const running = await node(servers, schema);
      try {
        await new Promise((r) => setTimeout(r, 1500));
        return await usedMemory(stats);
      } finally {
        await running.close();
      }
    };
    await stats.flushAll();
    const smallMemory = await memoryWith(smallPrefix);
    await stats.flushAll();
    const bigMemory = await memoryWith(prefix);

    // Queries at that size, through a node that serves it.
    const running = await node(servers, prefix);
    try {
      const op = operatorApi(running.url, OPERATOR);
      const admin = await op(`/admin/v1/organizations/${orgId}/users`, { email: 'admin@scale.test', name: 'Admin', role: 'admin', password: 'correct horse battery' });
      const key = (await op(`/admin/v1/organizations/${orgId}/api-keys`, { userId: admin.id, scopes: ['tickets:read', 'inbox:read', 'contacts:read'] })).key as string;
      const get = async (path: string) => {
        const r = await fetch(`${running.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
        if (r.status !== 200) throw new Error(`${path}: ${r.status} ${await r.text()}`);
        await r.arrayBuffer();
      };
      const ticketList = await p99(200, () => get('/v1/tickets?limit=20'));
      const ticketFiltered = await p99(200, () => get('/v1/tickets?status=open&limit=20&page=50'));
      const conversationList = await p99(200, () => get('/v1/conversations?view=all&limit=20'));
      const waiting = await p99(200, () => get('/v1/conversations?view=waiting&sort=waiting&limit=20'));
      // A page deep in the list: follow the cursor 50 pages, then time the next page.
      let cursor: string | null = null;
      for (let i = 0; i < 50; i++) {
        const r = await fetch(`${running.url}/v1/conversations?view=all&limit=20${cursor === null ? '' : `&cursor=${cursor}`}`, { headers: { authorization: `Bearer ${key}` } });
        cursor = ((await r.json()) as { nextCursor: string | null }).nextCursor;
      }
      const deepPage = await p99(200, () => get(`/v1/conversations?view=all&limit=20&cursor=${cursor}`));
      const counts = await p99(100, () => get('/v1/conversations/counts'));
      let w = 0;
      const search = await p99(200, () => get(`/v1/search?q=${encodeURIComponent(words[w++ % words.length]!)}&limit=20`));
      const phone = await p99(200, () => get(`/v1/search?q=49160${String(w++ % 10_000).padStart(8, '0')}&limit=20`));
      const mid = await p99(200, () => get(`/v1/search?q=code${w++ % 100}&limit=20`));
      const rare = await p99(200, () => get(`/v1/search?q=${encodeURIComponent(`number ${(w++ * 7919) % Math.max(1, MESSAGES)}`)}&limit=20`));
      const ticketSearch = await p99(200, () => get(`/v1/tickets?q=${encodeURIComponent(words[w++ % words.length]!)}&limit=20`));
      console.log(`\n## Clustered storage at scale: ${MESSAGES.toLocaleString('en')} session messages, ${TICKETS.toLocaleString('en')} tickets\n`);
      console.log('| measure | value |');
      console.log('|---|---:|');
      console.log(`| load through the stores (${CONCURRENCY} at a time) | messages ${Math.round(MESSAGES / messageSeconds)}/s, tickets ${Math.round(TICKETS / ticketSeconds)}/s |`);
      console.log(`| PostgreSQL database size | ${(size / 1e6).toFixed(0)} MB (${tables.map((t) => `${t.t} ${(Number(t.s) / 1e6).toFixed(0)} MB`).join(', ')}) |`);
      console.log(`| Redis used_memory, node on 10,000 messages / on ${MESSAGES.toLocaleString('en')} | ${(smallMemory / 1e6).toFixed(2)} MB / ${(bigMemory / 1e6).toFixed(2)} MB (ratio ${(bigMemory / smallMemory).toFixed(3)}) |`);
      const row = (name: string, r: { p50: number; p99: number }) => console.log(`| ${name} p50 / p99 | ${r.p50.toFixed(1)} / ${r.p99.toFixed(1)} ms |`);
      row('GET /v1/tickets?limit=20', ticketList);
      row('GET /v1/tickets?status=open&page=50', ticketFiltered);
      row('GET /v1/conversations?view=all&limit=20', conversationList);
      row('GET /v1/conversations?view=waiting&sort=waiting', waiting);
      row('GET /v1/conversations, page 51 by cursor', deepPage);
      row('GET /v1/conversations/counts', counts);
      row('GET /v1/search?q=<a word in ~1/12 of the messages>', search);
      row('GET /v1/search?q=<a phone number>', phone);
      row('GET /v1/search?q=code<n> (a word in 1/100 of the messages)', mid);
      row('GET /v1/search?q=number <n> (two words, one rare)', rare);
      row('GET /v1/tickets?q=<a word>', ticketSearch);
    } finally {
      await running.close();
    }
  } finally {
    await redis.close();
    await db.close();
  }
}

export async function run(): Promise<void> {
  // PostgreSQL as docker-compose.yml runs it (its default shared_buffers), not the tests' smaller one.
  const [redis, nats, postgres] = await Promise.all([startRedis(), startNats(), startPostgres({ sharedBuffers: '128MB' })]);
  const stats: StatsClient = createClient({ url: redis.url });
  await stats.connect();
  try {
    if (process.env.BENCH_CS_GROWTH !== '0') await growth({ redis, nats, postgres }, stats);
    if (MESSAGES > 0 || TICKETS > 0) await scale({ redis, nats, postgres }, stats);
  } finally {
    await stats.close();
    await Promise.all([redis.stop(), nats.stop(), postgres.stop()]);
  }
}
