import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { hashApiKey } from '../../src/domain/secrets.js';
import { createSqliteSandboxState } from '../../src/network/sandbox/index.js';
import { createSqliteStore, createSqliteResourceStore, openNodeDbIn, openSandboxDb } from '../../src/store/index.js';
import { createSqliteChannelRepo } from '../../src/store/channels/sqlite.js';
import { createSqliteCreditRepo } from '../../src/store/credits/sqlite.js';
import { createSqliteSessionMessageRepo } from '../../src/store/session-messages/sqlite.js';
import { createSqliteConversationIndex } from '../../src/store/conversations/sqlite.js';
import { SqliteActorStore } from '../../src/store/actors/sqlite.js';
import { SecretBox } from '../../src/store/secret-box.js';

/**
 * A data dir written by the embedded JSON store (EmbeddedDb, before SQLite):
 * `fixtures/json-store`, made by `fixtures/json-store-generate.mjs` running
 * that version of the service — a demo seed, tickets (one idempotent, one
 * updated), two template sends, a resource; stopped cleanly (snapshots), then
 * started again, written to, and killed (the rest only in the wal files).
 */
const FIXTURE = join(import.meta.dirname, 'fixtures', 'json-store');
const ids = JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', 'json-store.ids.json'), 'utf8')) as { key: string; channel: string; tickets: string[]; sends: string[] };

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const copy = () => {
  const d = mkdtempSync(join(tmpdir(), 'sb-import-'));
  dirs.push(d);
  cpSync(FIXTURE, d, { recursive: true });
  return d;
};

describe('first start over the JSON store of the previous version', () => {
  it('imports every collection of the four stores once, snapshot and log alike', async () => {
    const dir = copy();
    const db = openNodeDbIn(dir);
    const store = createSqliteStore(db);
    const key = await store.apiKeys.getByHash(hashApiKey(ids.key));
    expect(key).not.toBeNull();
    const org = key!.organizationId;
    expect((await store.organizations.get(org))?.name).toBeTruthy();

    // Tickets: two from before the snapshot, one only in wal.jsonl; the update survived; the sequence goes on.
    const page = await store.tickets.list({ organizationId: org, offset: 0, limit: 10 });
    expect(page.total).toBe(3);
    expect(page.tickets.map((t) => t.ticketId)[0]).toBe(ids.tickets[1]);
    expect((await store.tickets.get(org, ids.tickets[0]!))?.status).toBe('in_progress');
    expect((await store.tickets.list({ organizationId: org, status: 'in_progress', offset: 0, limit: 10 })).total).toBe(1);
    const next = await store.tickets.create(
      { ...page.tickets[0]!, _id: 'new', title: 'after import' },
      { id: 'ev-after', type: 'ticket.created', createdAt: new Date().toISOString() },
    );
    expect(next.ticketId.endsWith('000004')).toBe(true);

    // Contacts of both sends, by external id and by id.
    const contacts = await store.contacts.list(org);
    expect(contacts).toHaveLength(2);
    expect(await store.contacts.getById(org, contacts[0]!.id)).toEqual(contacts[0]);

    // Messaging: the channel opens with its key, messages and sessions, credits, conversations.
    const box = SecretBox.load('0'.repeat(64), null);
    expect((await createSqliteChannelRepo(db, box).get(org, ids.channel))?.id).toBe(ids.channel);
    const messages = createSqliteSessionMessageRepo(db);
    const sent = await messages.getByNetworkId(org, ids.sends[1]!);
    expect(sent).not.toBeNull();
    expect((await messages.listSession(org, sent!.sessionId))?.map((m) => m._id)).toContain(sent!._id);
    const credits = createSqliteCreditRepo(db, systemClock);
    expect((await credits.history(org, 10)).map((e) => e.kind)).toEqual(['charge', 'charge', 'top_up']);
    expect((await createSqliteConversationIndex(db).list({ organizationId: org, offset: 0, limit: 10 })).total).toBe(2);

    // Webhooks' store (resources) and the actors' state.
    expect((await createSqliteResourceStore(db).list(org, { offset: 0, limit: 10 })).resources.map((r) => r.name)).toEqual(['fixture-resource']);
    expect(await new SqliteActorStore(db).load({ type: 'conversation', key: `${org}/${contacts[0]!.audienceExternalId}`, partition: 0 })).toBeDefined();

    // Once: a second start imports nothing again (the ticket created since stays the newest).
    await db.close();
    const again = createSqliteStore(openNodeDbIn(dir));
    expect((await again.tickets.list({ organizationId: org, offset: 0, limit: 10 })).total).toBe(4);
    await again.close();
  });

  it('imports the sandbox network’s accounts into its own database', async () => {
    const dir = copy();
    const db = openSandboxDb(dir);
    const accounts = await createSqliteSandboxState(db).listAccounts();
    expect(accounts.length).toBeGreaterThan(0);
    await db.close();
  });
});
