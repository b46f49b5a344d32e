import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONVERSATION_ACTOR, conversationActorSpec, createEmbeddedActorSystem, durableActor, type ActorSystem } from '../../src/actors/index.js';
import { ConversationClient, HandoverService } from '../../src/conversations/index.js';
import type { Principal } from '../../src/domain/types.js';
import type { DomainEvent, EventPublisher } from '../../src/events/types.js';
import { createHttpApp } from '../../src/http/app.js';
import { handoverRoutes } from '../../src/http/routes/handover.js';
import { silentLogger } from '../../src/log.js';
import { SqliteActorStore } from '../../src/store/actors/sqlite.js';
import { openNodeDbIn } from '../../src/store/backing.js';
import { createSqliteStore } from '../../src/store/core/sqlite.js';
import { deferred, testSettings } from './helpers.js';

/** An event log that holds every publish until released: keeps a command running. */
class GatedPublisher implements EventPublisher {
  gate = deferred();
  readonly events: DomainEvent[] = [];
  async publish(e: DomainEvent): Promise<void> {
    await this.gate.promise;
    this.events.push(e);
  }
}

describe('handover under backpressure', () => {
  let system: ActorSystem;
  let server: Server;
  let url: string;
  const events = new GatedPublisher();
  const principal: Principal = { organizationId: 'org_bp', userId: 'u1', role: 'admin', keyId: 'k1', scopes: new Set(['conversation:handover:request', 'conversation:handover:open']) };

  beforeAll(async () => {
    const db = await openNodeDbIn(null);
    const store = createSqliteStore(db);
    await store.contacts.upsert({ id: 'c1', organizationId: 'org_bp', audienceExternalId: '15550001555:1', name: null, createdAt: new Date().toISOString() });
    const actorStore = new SqliteActorStore(await openNodeDbIn(null));
    system = createEmbeddedActorSystem(testSettings({ mailboxSize: 1 }), { store: actorStore });
    system.register(CONVERSATION_ACTOR, durableActor(conversationActorSpec(10), { store: actorStore, events }));
    await system.start();
    const app = createHttpApp({
      routes: handoverRoutes(new HandoverService(store.contacts, new ConversationClient(system, store.contacts))),
      log: silentLogger,
      bodyLimit: '16kb',
      authenticate: async () => principal,
      authenticateOperator: async () => {},
    });
    server = createServer(app).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    events.gate.resolve();
    server?.close();
    await system?.stop();
  });

  const post = () =>
    fetch(`${url}/v1/handover`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer x' }, body: JSON.stringify({ audienceExternalId: '15550001555:1' }) });

  it('refuses a command beyond the contact\'s mailbox with 503, Retry-After and the error shape; the accepted one completes', async () => {
    const first = post();
    // Wait until the first command is running (held in its event publish).
    while (system.host.stats().mailboxDepth === 0) await new Promise((r) => setTimeout(r, 5));
    const refused = await post();
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toMatchObject({ success: false, error: { code: 'mailbox_full' } });
    events.gate.resolve();
    const ok = await first;
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ success: true });
    expect(events.events.map((e) => e.type)).toEqual(['handover.requested']);
    expect(await (await post()).json()).toEqual({ success: false });
  });
});
