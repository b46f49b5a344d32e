import { OPERATOR_TOKEN, startTestService, type TestOrg, type TestService } from '../harness/service.js';
import type { Clock } from '../../src/clock.js';
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
