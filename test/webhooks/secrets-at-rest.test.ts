import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis } from '../../src/store/index.js';
import pg from 'pg';
import { useClusterServers } from '../harness/use-servers.js';
import { startTestService, type TestService } from '../harness/service.js';
import { eventually } from '../events/contract.js';
import { startReceiver, type TestReceiver } from './receiver.js';

const env = { WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_RETRY_BASE_MS: '50', WEBHOOK_RETRY_MAX_DELAY_MS: '200' };

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? [join(dir, e.name), ...filesUnder(join(dir, e.name))] : [join(dir, e.name)]));
}

/** Registers a webhook, rotates its secret and has one event delivered, signed with the new secret; returns both secrets. */
async function registerRotateDeliver(svc: TestService, receiver: TestReceiver): Promise<string[]> {
  const org = await svc.createOrg('Secrets');
  const reg = await svc.call('POST', '/api/v1/webhooks', { key: org.adminKey, body: { url: receiver.url, events: ['ticket.created'] } });
  expect(reg.status).toBe(201);
  const rot = await svc.call('POST', `/api/v1/webhooks/${reg.body.id}/rotate-secret`, { key: org.adminKey });
  expect(rot.status).toBe(200);
  receiver.setSecret(rot.body.secret);
  await svc.call('POST', '/v1/tickets', { key: org.adminKey, body: { subject: 's', description: 'd' } });
  const got = await eventually(async () => receiver.requests.find((r) => r.method === 'POST'));
  expect(got.signaturesValid).toBe(true);
  return [reg.body.secret, rot.body.secret].map((s: string) => s.slice('whsec_'.length));
}

describe('webhook signing secrets at rest', () => {
  let receiver: TestReceiver;
  const servers = useClusterServers();
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
  });

  it('embedded: no data file holds a current or previous secret in clear, and data files are 0600 in 0700 directories', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-secrets-'));
    const dataDir = join(dir, 'data');
    try {
      const svc = await startTestService({ env: { ...env, DATA_DIR: dataDir } });
      let secrets: string[];
      try {
        secrets = await registerRotateDeliver(svc, receiver);
      } finally {
        await svc.close();
      }
      const entries = filesUnder(dataDir);
      expect(entries.length).toBeGreaterThan(3);
      for (const p of entries) {
        const st = statSync(p);
        if (st.isDirectory()) expect((st.mode & 0o777).toString(8), p).toBe('700');
        else {
          expect((st.mode & 0o777).toString(8), p).toBe('600');
          const text = readFileSync(p, 'latin1');
          for (const s of secrets) expect(text.includes(s), `${p} holds a secret`).toBe(false);
        }
      }
      expect((statSync(dataDir).mode & 0o777).toString(8)).toBe('700');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('clustered: no PostgreSQL row and no Redis value holds a secret in clear', async () => {
    receiver.requests.length = 0;
    const svc = await startTestService({ env: { ...env, ...servers.env('sealed'), SECRETS_KEY: '7'.repeat(64) } });
    let secrets: string[];
    try {
      secrets = await registerRotateDeliver(svc, receiver);
    } finally {
      await svc.close();
    }
    const db = new pg.Client({ connectionString: servers.postgres.url });
    await db.connect();
    try {
      const tables = (await db.query("SELECT table_name FROM information_schema.tables WHERE table_schema = 'sealed' AND table_type = 'BASE TABLE'")).rows as { table_name: string }[];
      let rows = 0;
      for (const { table_name } of tables) {
        for (const r of (await db.query(`SELECT t::text AS row FROM sealed.${table_name} t`)).rows as { row: string }[]) {
          rows++;
          for (const s of secrets) expect(r.row.includes(s), `a row of ${table_name} holds a secret`).toBe(false);
        }
      }
      expect(rows).toBeGreaterThan(3);
    } finally {
      await db.end();
    }
    const client = await connectRedis(servers.redis.url);
    try {
      const keys = await client.keys('sealed:*');
      for (const k of keys) {
        const type = await client.type(k);
        const values =
          type === 'string' ? [await client.get(k)] : type === 'hash' ? Object.values(await client.hGetAll(k)) : type === 'list' ? await client.lRange(k, 0, -1) : type === 'zset' ? await client.zRange(k, 0, -1) : type === 'set' ? await client.sMembers(k) : [];
        for (const v of values) for (const s of secrets) expect(String(v).includes(s), `${k} holds a secret`).toBe(false);
      }
    } finally {
      await client.quit();
    }
  });
});
