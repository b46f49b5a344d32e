import { describe, expect, it } from 'vitest';
import { networkEventKey, parseWebhook, signHubSignature, verifyHubSignature } from '../../src/network/index.js';

const envelope = (value: Record<string, unknown>) => ({
  object: 'whatsapp_business_account',
  entry: [{ id: '102290129340398', changes: [{ value: { messaging_product: 'whatsapp', metadata: { display_phone_number: '15550783881', phone_number_id: '106540352242922' }, ...value }, field: 'messages' }] }],
});

describe('X-Hub-Signature-256', () => {
  const body = Buffer.from(JSON.stringify(envelope({ statuses: [] })));
  it('verifies the signature of the exact bytes', () => {
    const sig = signHubSignature('app-secret', body);
    expect(sig).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(verifyHubSignature('app-secret', body, sig)).toBe(true);
    expect(verifyHubSignature('app-secret', body, sig.toUpperCase().replace('SHA256=', 'sha256='))).toBe(true);
  });
  it('fails closed: wrong secret, changed body, malformed or missing header, empty secret', () => {
    const sig = signHubSignature('app-secret', body);
    expect(verifyHubSignature('other', body, sig)).toBe(false);
    expect(verifyHubSignature('app-secret', Buffer.from(body.toString().replace('15550783881', '15550783882')), sig)).toBe(false);
    expect(verifyHubSignature('app-secret', Buffer.concat([body, Buffer.from(' ')]), sig)).toBe(false);
    expect(verifyHubSignature('app-secret', body, undefined)).toBe(false);
    expect(verifyHubSignature('app-secret', body, '')).toBe(false);
    expect(verifyHubSignature('app-secret', body, 'sha1=' + sig.slice(7))).toBe(false);
    expect(verifyHubSignature('app-secret', body, sig.slice(0, -2))).toBe(false);
    expect(verifyHubSignature('', body, signHubSignature('', body))).toBe(false);
  });
});

describe('webhook parsing', () => {
  it('reads every kind of customer message', () => {
    const parsed = parseWebhook(
      envelope({
        contacts: [{ profile: { name: 'Kerry Fisher' }, wa_id: '16315551234' }],
        messages: [
          { from: '16315551234', id: 'wamid.t1', timestamp: '1700000000', type: 'text', text: { body: 'Hi there' } },
          { from: '16315551234', id: 'wamid.b1', timestamp: '1700000001', type: 'interactive', interactive: { type: 'button_reply', button_reply: { id: 'yes', title: 'Yes' } }, context: { from: '15550783881', id: 'wamid.out1' } },
          { from: '16315551234', id: 'wamid.q1', timestamp: '1700000002', type: 'button', button: { payload: 'TRACK', text: 'Track my order' }, context: { from: '15550783881', id: 'wamid.out2' } },
          { from: '16315551234', id: 'wamid.i1', timestamp: '1700000003', type: 'image', image: { id: 'media-1', mime_type: 'image/jpeg', sha256: 'x', caption: 'look' } },
          { from: '16315551234', id: 'wamid.l1', timestamp: '1700000004', type: 'location', location: { latitude: 1.5, longitude: 2.5, name: 'HQ' } },
          { from: '16315551234', id: 'wamid.r1', timestamp: '1700000005', type: 'reaction', reaction: { message_id: 'x', emoji: '👍' } },
        ],
      }),
    );
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const ev = parsed.value.events;
    expect(ev).toHaveLength(6);
    expect(ev[0]).toMatchObject({ kind: 'message', from: '16315551234', profileName: 'Kerry Fisher', phoneNumberId: '106540352242922', businessAccountId: '102290129340398', at: new Date(1700000000 * 1000).toISOString(), content: { type: 'text', text: 'Hi there' } });
    expect(ev[1]).toMatchObject({ content: { type: 'button_reply', buttonId: 'yes', text: 'Yes' }, replyTo: 'wamid.out1' });
    expect(ev[2]).toMatchObject({ content: { type: 'button_reply', payload: 'TRACK', text: 'Track my order' }, replyTo: 'wamid.out2' });
    expect(ev[3]).toMatchObject({ content: { type: 'image', mediaId: 'media-1', caption: 'look', mimeType: 'image/jpeg' } });
    expect(ev[4]).toMatchObject({ content: { type: 'location', location: { latitude: 1.5, longitude: 2.5, name: 'HQ' }, text: 'HQ' } });
    expect(ev[5]).toMatchObject({ content: { type: 'unsupported', originalType: 'reaction' } });
    expect(networkEventKey(ev[0]!)).toBe('m:wamid.t1');
  });

  it('reads statuses, with the errors of a failed one', () => {
    const parsed = parseWebhook(
      envelope({
        statuses: [
          { id: 'wamid.out1', status: 'delivered', timestamp: '1700000000', recipient_id: '16315551234', pricing: { billable: true, pricing_model: 'PMP', category: 'utility' } },
          { id: 'wamid.out2', status: 'failed', timestamp: '1700000001', recipient_id: '16315551234', errors: [{ code: 131047, title: 'Re-engagement message', message: 'Re-engagement message', error_data: { details: 'more than 24 hours' } }] },
          { id: 'wamid.out3', status: 'deleted', timestamp: '1700000001' },
        ],
      }),
    );
    if (!parsed.ok) throw new Error(parsed.reason);
    expect(parsed.value.events).toEqual([
      { kind: 'status', businessAccountId: '102290129340398', phoneNumberId: '106540352242922', networkMessageId: 'wamid.out1', recipientId: '16315551234', status: 'delivered', at: new Date(1700000000 * 1000).toISOString(), errors: [] },
      { kind: 'status', businessAccountId: '102290129340398', phoneNumberId: '106540352242922', networkMessageId: 'wamid.out2', recipientId: '16315551234', status: 'failed', at: new Date(1700000001 * 1000).toISOString(), errors: [{ code: 131047, title: 'Re-engagement message', message: 'more than 24 hours' }] },
    ]);
    expect(parsed.value.skipped).toEqual(['entry[0].changes[0]: status deleted']);
    expect(networkEventKey(parsed.value.events[1]!)).toBe('s:wamid.out2:failed');
  });

  it('refuses what is not the envelope and skips other fields', () => {
    expect(parseWebhook({ object: 'page', entry: [] }).ok).toBe(false);
    expect(parseWebhook('x').ok).toBe(false);
    const other = parseWebhook({ object: 'whatsapp_business_account', entry: [{ id: '1', changes: [{ field: 'account_update', value: {} }, { field: 'messages', value: { nope: true } }] }] });
    expect(other.ok && other.value).toEqual({ events: [], skipped: ['entry[0].changes[0]: field account_update', 'entry[0].changes[1]: unexpected value shape'] });
  });
});
