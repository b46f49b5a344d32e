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
    expect(ev[5]).toMatchObject({ content: { type: 'reaction', reaction: { messageId: 'x', emoji: '👍' }, text: '👍' } });
    expect(networkEventKey(ev[0]!)).toBe('m:wamid.t1');
  });

  it('keeps contacts, referrals, orders, system and unsupported messages, and a type it does not know, with what they carry', () => {
    // Shapes of the Cloud API's webhook reference examples (contacts, click-to-WhatsApp referral, order, system, unsupported).
    const contactsMsg = {
      from: '16315551234', id: 'wamid.c1', timestamp: '1700000010', type: 'contacts',
      contacts: [{ addresses: [{ city: 'Menlo Park', country: 'United States', country_code: 'us', state: 'CA', street: '1 Hacker Way', type: 'WORK', zip: '94025' }], birthday: '2012-08-18', emails: [{ email: 'kfish@fb.com', type: 'WORK' }], name: { formatted_name: 'Kerry Fisher', first_name: 'Kerry', last_name: 'Fisher' }, org: { company: 'Meta' }, phones: [{ phone: '+1 (940) 555-1234', type: 'HOME' }, { phone: '+1 (650) 555-1234', type: 'WORK', wa_id: '16505551234' }], urls: [{ url: 'https://www.meta.com', type: 'WORK' }] }],
    };
    const referral = { from: '16315551234', id: 'wamid.ad1', timestamp: '1700000011', type: 'text', text: { body: 'Is this still available?' }, referral: { source_url: 'https://fb.me/ad', source_id: '120200000000', source_type: 'ad', headline: 'Lids on sale', body: 'All lids 20% off', media_type: 'image', image_url: 'https://scontent.example/ad.jpg', ctwa_clid: 'ARAkLkA8rmlFeiCktEJQ' } };
    const order = { from: '16315551234', id: 'wamid.o1', timestamp: '1700000012', type: 'order', order: { catalog_id: '2881', text: 'Two lids please', product_items: [{ product_retailer_id: 'lid-1', quantity: '2', item_price: '9.99', currency: 'EUR' }] } };
    const system = { from: '16315551234', id: 'wamid.s1', timestamp: '1700000013', type: 'system', system: { body: 'Kerry changed from 16315551234 to 16315559999', wa_id: '16315559999', type: 'user_changed_number' } };
    const unsupported = { from: '16315551234', id: 'wamid.u1', timestamp: '1700000014', type: 'unsupported', errors: [{ code: 131051, title: 'Message type unknown', message: 'Message type unknown', error_data: { details: 'Message type is currently not supported.' } }] };
    const future = { from: '16315551234', id: 'wamid.f1', timestamp: '1700000015', type: 'hologram', hologram: { id: 'h-1' } };
    const parsed = parseWebhook(envelope({ contacts: [{ profile: { name: 'Kerry Fisher' }, wa_id: '16315551234' }], messages: [contactsMsg, referral, order, system, unsupported, future] }));
    if (!parsed.ok) throw new Error(parsed.reason);
    const content = parsed.value.events.map((e) => (e.kind === 'message' ? e.content : null));
    expect(content[0]).toEqual({ type: 'contacts', contacts: contactsMsg.contacts, text: 'Kerry Fisher' });
    expect(content[1]).toEqual({ type: 'text', text: 'Is this still available?', referral: referral.referral });
    expect(content[2]).toEqual({ type: 'unsupported', originalType: 'order', text: 'Order: 1 item', raw: order });
    expect(content[3]).toEqual({ type: 'unsupported', originalType: 'system', text: system.system.body, raw: system });
    expect(content[4]).toEqual({ type: 'unsupported', originalType: 'unsupported', raw: unsupported });
    expect(content[5]).toEqual({ type: 'unsupported', originalType: 'hologram', raw: future });
    expect(parsed.value.skipped).toEqual([]);
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
