import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { OPERATOR_TOKEN, startTestService, type TestOrg, type TestService } from '../harness/service.js';
import type { Clock } from '../../src/clock.js';
import type { DomainEvent } from '../../src/events/types.js';
import type { Logger } from '../../src/log.js';

export interface MessagingOrg extends TestOrg {
  /** A WhatsApp channel on the sandbox network, templates synced. */
  channelId: string;
  phoneNumberId: string;
  /** A web-chat channel: "not a chat-network channel". */
  webChannelId: string;
}

/** The service with fast sandbox statuses (no pause between sent / delivered / read). */
export function startMessagingService(opts: { env?: Record<string, string>; clock?: Clock; log?: Logger } = {}): Promise<TestService> {
  return startTestService({ env: { SANDBOX_STATUS_DELAY_MS: '0', ...opts.env }, clock: opts.clock, log: opts.log });
}

export async function op(svc: TestService, method: string, path: string, body?: unknown) {
  return svc.call(method, path, { key: OPERATOR_TOKEN, body });
}

/** An organization with a sandbox WhatsApp channel, a web-chat channel and `credits` credits. */
export async function messagingOrg(svc: TestService, name = 'Org', credits = 100): Promise<MessagingOrg> {
  const org = await svc.createOrg(name);
  const ch = await op(svc, 'POST', `/admin/v1/organizations/${org.id}/channels`, { kind: 'whatsapp_cloud', name: 'WA', network: 'sandbox' });
  if (ch.status !== 201) throw new Error(`channel create failed: ${ch.status} ${JSON.stringify(ch.body)}`);
  if (!ch.body.templateSync?.ok) throw new Error(`template sync failed: ${JSON.stringify(ch.body.templateSync)}`);
  const web = await op(svc, 'POST', `/admin/v1/organizations/${org.id}/channels`, { kind: 'web_chat', name: 'Site chat' });
  if (credits > 0) await op(svc, 'POST', `/admin/v1/organizations/${org.id}/credits/top-up`, { amount: credits });
  return { ...org, channelId: ch.body.id, phoneNumberId: ch.body.phoneNumberId, webChannelId: web.body.id };
}

/** What `useTwoOrgs` gives a suite. `svc`, `a` and `b` are there from the suite's `beforeAll` on. */
export interface TwoOrgs {
  readonly svc: TestService;
  readonly a: MessagingOrg;
  readonly b: MessagingOrg;
  /** The events followed (see `useTwoOrgs`' `events`), in the order the log delivered them. */
  readonly seen: DomainEvent[];
  /** The followed events of `type` whose data passes `pred`. */
  events(type: string, pred?: (data: any) => boolean): DomainEvent[];
  /** The audienceExternalId of the customer at `phone` on the organization's WhatsApp channel. */
  aeid(org: MessagingOrg, phone: string): string;
  /** The customer at `phone` writes `text` to the organization's WhatsApp channel, through the sandbox network. */
  customer(org: MessagingOrg, phone: string, text: string): ReturnType<TestService['call']>;
  /** That customer's conversation as the organization's admin reads it; `undefined` while there is none. */
  conversation(org: MessagingOrg, phone: string): Promise<any>;
  /** `PATCH /v1/channels/{id}` of the organization's WhatsApp channel (or `channelId`), as its admin (or `key`). */
  patchChannel(org: MessagingOrg, body: unknown, key?: string, channelId?: string): ReturnType<TestService['call']>;
}

/**
 * The set-up most messaging suites share, as hooks of the enclosing
 * `describe`: before its first test, the messaging service (on `clock`, with
 * `env`: a function is called then, for servers an outer suite starts) and
 * two organizations made by `messagingOrg`, `a` and `b`; after its last
 * test, the service closed. `events` says which organizations' domain
 * events are followed into `seen`: `a`'s, both's, every one's (`all`,
 * organizations a test makes too) or none (the default: no consumer).
 * Read `svc`, `a` and `b` inside tests and hooks, not at collection time.
 * A suite's own hooks, added after this call, run after this set-up and
 * (vitest runs `afterAll` hooks in reverse) before the service closes.
 */
export function useTwoOrgs(opts: { clock?: Clock; env?: Record<string, string> | (() => Record<string, string>); events?: 'a' | 'both' | 'all' | 'none' } = {}): TwoOrgs {
  let svc: TestService | undefined;
  let a: MessagingOrg | undefined;
  let b: MessagingOrg | undefined;
  const seen: DomainEvent[] = [];
  beforeAll(async () => {
    svc = await startMessagingService({ clock: opts.clock, env: typeof opts.env === 'function' ? opts.env() : opts.env });
    a = await messagingOrg(svc, 'A');
    b = await messagingOrg(svc, 'B');
    const follow = opts.events ?? 'none';
    if (follow === 'none') return;
    const [aId, bId] = [a.id, b.id];
    await svc.running.services.events.consume(`two-orgs-${randomUUID()}`, async (e) => {
      if (follow === 'all' || e.organizationId === aId || (follow === 'both' && e.organizationId === bId)) seen.push(e);
    });
  }, 60_000);
  afterAll(async () => svc?.close());

  const ready = <T>(value: T | undefined, name: string): T => {
    if (value === undefined) throw new Error(`useTwoOrgs: no ${name} yet: read it inside a test or hook, after the suite's beforeAll`);
    return value;
  };
  const call = (org: MessagingOrg, method: string, path: string, body?: unknown, key = org.adminKey) => ready(svc, 'svc').call(method, path, { key, body });
  const aeid = (org: MessagingOrg, phone: string) => `${phone}:${org.phoneNumberId}`;
  return {
    get svc() {
      return ready(svc, 'svc');
    },
    get a() {
      return ready(a, 'a');
    },
    get b() {
      return ready(b, 'b');
    },
    seen,
    events: (type, pred = () => true) => seen.filter((e) => e.type === type && pred(e.data)),
    aeid,
    customer: (org, phone, text) => call(org, 'POST', `/v1/sandbox/channels/${org.channelId}/customers/${phone}/messages`, { text }),
    conversation: async (org, phone) => (await call(org, 'GET', `/v1/conversations/${aeid(org, phone)}`)).body.conversation,
    patchChannel: (org, body, key = org.adminKey, channelId = org.channelId) => call(org, 'PATCH', `/v1/channels/${channelId}`, body, key),
  };
}

export const orderUpdate = (channelId: string, to: string, params = ['Ann', 'A-1001', 'Monday']) => ({
  channelId,
  to,
  template: {
    name: 'order_update',
    language: { code: 'en_US', policy: 'deterministic' },
    components: [{ type: 'body', parameters: params.map((text) => ({ type: 'text', text })) }],
  },
});

/** Polls until `check` returns a truthy value (webhooks arrive asynchronously). */
export async function eventually<T>(check: () => Promise<T | undefined | null | false>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
