/**
 * What PostgreSQL's server spends on the writes a template send commits
 * before its state write (the contact, the message with its session, the
 * remembered reply), in three shapes (not part of `npm run bench`):
 *
 *   node --import tsx bench/_pg-send-shapes.ts [seconds per round]
 *
 * - `one send per transaction` (the baseline, as the service writes today):
 *   BEGIN, the three statements, COMMIT;
 * - `ten sends, multi-row statements`: ten sends' rows in one transaction,
 *   one statement per kind of write;
 * - `ten sends, a savepoint each`: ten sends in one transaction, each in
 *   its own savepoint (a shared transaction that keeps each send's failure
 *   to itself).
 *
 * The statements are the service's own, with the values of a real send; the
 * schema is the service's migrations, on a PostgreSQL started by the test
 * harness. `pgbench` (Debian's PostgreSQL) drives each shape with 4
 * clients and prepared statements, in three interleaved rounds; the figure
 * is the server's CPU per send (the postmaster and all its children, from
 * `/proc`), the median round, with its ratio to the baseline's.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PgDb } from '../src/store/postgres/db.js';
import { NODE_PG_MIGRATIONS } from '../src/store/postgres/schema.js';
import { postgresBinDir, startPostgres } from '../test/harness/servers.js';
import { postgresCpu } from './lib.js';

const SECONDS = Number(process.argv[2] ?? 5);
const ROUNDS = 3;

const contact = { id: 'c1', organizationId: 'org_bench', audienceExternalId: '4915100001234', name: null, createdAt: '2026-11-27T21:00:00.000Z' };
const wamid = 'wamid.HBgLNDkxNTEwMDAwMTIzNBUCABEYEjAwMDAwMDAwMDAwMDAwMDAwMAA=';
const message = {
  _id: 'msg_x', sessionId: 'ses_x', organizationId: 'org_bench', channelId: 'ch_1', audienceExternalId: '4915100001234', direction: 'outbound', sender: { type: 'api' },
  content: { type: 'template', template: { name: 'order_update', language: { code: 'en_US', policy: 'deterministic' }, components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ann' }, { type: 'text', text: 'A-123' }, { type: 'text', text: 'Monday' }] }] } },
  sentAt: '2026-11-27T21:00:00.000Z', messageId: wamid, status: 'accepted', statusUpdatedAt: '2026-11-27T21:00:00.000Z', charge: { reservationId: 'res_x', amount: 5 },
};
const reply = { outcome: 'sent', messageId: wamid, sessionId: 'ses_x', contactId: 'c1', sentAt: '2026-11-27T21:00:00.000Z', _id: 'msg_x' };

// pgbench reads `:name` as a variable anywhere in a line: the literals below have a space after every colon (JSON.stringify's third argument does not apply to colons, hence the replace).
const literal = (v: unknown) => `'${JSON.stringify(v).replace(/":/g, '": ').replace(/'/g, "''")}'`;
const id = (prefix: string, v: string) => `'${prefix}' || (:${v})::bigint`;

/** The three statements of one send (as the stores send them), its ids from pgbench variable `v`. */
function oneSend(v: string): string[] {
  return [
    `WITH ins AS (INSERT INTO contacts (org, audience_external_id, id, body) VALUES ('org_bench', ${id('a', v)}, ${id('c', v)}, ${literal(contact)}) ON CONFLICT DO NOTHING RETURNING body) SELECT body FROM ins UNION ALL SELECT body FROM contacts WHERE org = 'org_bench' AND audience_external_id = ${id('a', v)} LIMIT 1;`,
    `WITH m AS (INSERT INTO session_messages (org, id, session_id, network_id, status, body, search) SELECT 'org_bench', ${id('m', v)}, ${id('s', v)}, ${id('w', v)}, 'accepted', b, sb_message_search(b) FROM (SELECT ${literal(message)}::jsonb AS b) v ON CONFLICT DO NOTHING RETURNING 1), s AS (INSERT INTO chat_sessions (org, session_id, audience_external_id, opened_at) SELECT 'org_bench', ${id('s', v)}, ${id('a', v)}, '2026-11-27T21:00:00.000Z' WHERE EXISTS (SELECT 1 FROM m) ON CONFLICT DO NOTHING) SELECT count(*) AS stored FROM m;`,
    `INSERT INTO actor_replies (actor, key_digest, reply, expires_at, epoch) VALUES (${id('conversation/org_bench/a', v)}, ${id('k', v)}, ${literal(reply)}, 1800000000000, 1) ON CONFLICT (actor, key_digest) DO UPDATE SET reply = excluded.reply, expires_at = excluded.expires_at, epoch = excluded.epoch WHERE actor_replies.epoch <= excluded.epoch;`,
  ];
}

const vars = (n: number) => Array.from({ length: n }, (_, i) => `\\set n${i} random(1, 2000000000)`);
const keys = (n: number) => `ARRAY[${Array.from({ length: n }, (_, i) => `(:n${i})::bigint`).join(', ')}]`;

const shapes: { name: string; sends: number; script: string }[] = [
  { name: 'one send per transaction (baseline)', sends: 1, script: [...vars(1), 'BEGIN;', ...oneSend('n0'), 'COMMIT;'].join('\n') },
  {
    name: 'ten sends, multi-row statements',
    sends: 10,
    script: [
      ...vars(10),
      'BEGIN;',
      `WITH k AS (SELECT unnest(${keys(10)}) AS n), ins AS (INSERT INTO contacts (org, audience_external_id, id, body) SELECT 'org_bench', 'a' || n, 'c' || n, ${literal(contact)} FROM k ORDER BY n ON CONFLICT DO NOTHING RETURNING audience_external_id, body) SELECT k.n, coalesce(ins.body, c.body) FROM k LEFT JOIN ins ON ins.audience_external_id = 'a' || k.n LEFT JOIN contacts c ON c.org = 'org_bench' AND c.audience_external_id = 'a' || k.n;`,
      `WITH k AS (SELECT unnest(${keys(10)}) AS n, ${literal(message)}::jsonb AS b), m AS (INSERT INTO session_messages (org, id, session_id, network_id, status, body, search) SELECT 'org_bench', 'm' || n, 's' || n, 'w' || n, 'accepted', b, sb_message_search(b) FROM k ON CONFLICT DO NOTHING RETURNING id), s AS (INSERT INTO chat_sessions (org, session_id, audience_external_id, opened_at) SELECT 'org_bench', 's' || n, 'a' || n, '2026-11-27T21:00:00.000Z' FROM k WHERE EXISTS (SELECT 1 FROM m WHERE m.id = 'm' || k.n) ON CONFLICT DO NOTHING) SELECT count(*) FROM m;`,
      `INSERT INTO actor_replies (actor, key_digest, reply, expires_at, epoch) SELECT 'conversation/org_bench/a' || n, 'k' || n, ${literal(reply)}, 1800000000000, 1 FROM unnest(${keys(10)}) AS n ORDER BY 1, 2 ON CONFLICT (actor, key_digest) DO UPDATE SET reply = excluded.reply, expires_at = excluded.expires_at, epoch = excluded.epoch WHERE actor_replies.epoch <= excluded.epoch;`,
      'COMMIT;',
    ].join('\n'),
  },
  {
    name: 'ten sends, a savepoint each',
    sends: 10,
    script: [...vars(10), 'BEGIN;', ...Array.from({ length: 10 }, (_, i) => ['SAVEPOINT send;', ...oneSend(`n${i}`), 'RELEASE SAVEPOINT send;']).flat(), 'COMMIT;'].join('\n'),
  },
];

function pgbench(url: string, file: string): Promise<number> {
  const beside = join(postgresBinDir(), 'pgbench');
  const bin = existsSync(beside) ? beside : 'pgbench';
  return new Promise((resolve, reject) => {
    const p = spawn(bin, ['-n', '-M', 'prepared', '-c', '4', '-j', '1', '-T', String(SECONDS), '-f', file, url], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (out += d.toString()));
    p.on('error', reject);
    p.on('exit', (code) => {
      const m = /transactions actually processed: (\d+)/.exec(out);
      if (code !== 0 || m === null || /error/i.test(out)) reject(new Error(`pgbench failed (${code}): ${out.slice(-800)}`));
      else resolve(Number(m[1]));
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), 'sb-pg-shapes-'));
const server = await startPostgres();
try {
  await (await PgDb.open(server.url, { migrations: NODE_PG_MIGRATIONS })).close();
  const postmaster = Number(readFileSync(join(server.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  const perSend = new Map<string, number[]>(shapes.map((s) => [s.name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const shape of shapes) {
      const file = join(dir, 'shape.sql');
      writeFileSync(file, shape.script + '\n');
      const cpu0 = postgresCpu(postmaster);
      const transactions = await pgbench(server.url, file);
      // The backends end with pgbench; the postmaster counts them once it has reaped them.
      await new Promise((r) => setTimeout(r, 500));
      perSend.get(shape.name)!.push(((postgresCpu(postmaster) - cpu0) * 1e6) / (transactions * shape.sends));
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const base = median(perSend.get(shapes[0]!.name)!);
  console.log(`# PostgreSQL CPU per send for a send's first transaction (pgbench, 4 clients, ${SECONDS} s × ${ROUNDS} interleaved rounds, median)\n`);
  console.log('| shape | server CPU µs per send (rounds) | ratio to the baseline |\n|---|---:|---:|');
  for (const shape of shapes) {
    const xs = perSend.get(shape.name)!;
    console.log(`| ${shape.name} | ${median(xs).toFixed(0)} (${xs.map((x) => x.toFixed(0)).join(', ')}) | ${(median(xs) / base).toFixed(2)} |`);
  }
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
