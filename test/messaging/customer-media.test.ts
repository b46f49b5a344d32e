import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { eventually, useTwoOrgs, type MessagingOrg } from './messaging-helpers.js';

// A 1×1 PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

describe('media the customer sends: the webhook carries an id, agents get the file through the service', () => {
  const orgs = useTwoOrgs();

  const send = (org: MessagingOrg, phone: string, body: Record<string, unknown>) =>
    orgs.svc.call('POST', `/v1/sandbox/channels/${org.channelId}/customers/${phone}/media`, { key: org.adminKey, body });
  const received = async (org: MessagingOrg, phone: string, type: string) =>
    eventually(async () => {
      const r = await orgs.svc.call('GET', `/v1/conversations/${phone}:${org.phoneNumberId}`, { key: org.adminKey });
      return r.status === 200 && r.body.conversation.messages.find((m: { content: { type: string } }) => m.content.type === type);
    });

  it('stores a photo with its media id and caption, and serves the same bytes to the organization', async () => {
    const sent = await send(orgs.a, '4915100000301', { kind: 'image', mimeType: 'image/png', data: PNG.toString('base64'), caption: 'the broken part' });
    expect(sent.status).toBe(201);
    const m = await received(orgs.a, '4915100000301', 'image');
    expect(m.content).toMatchObject({ type: 'image', mimeType: 'image/png', caption: 'the broken part', mediaId: expect.stringMatching(/^\d+$/) });

    const file = await fetch(`${orgs.svc.url}/v1/channels/${orgs.a.channelId}/media/${m.content.mediaId}`, { headers: { authorization: `Bearer ${orgs.a.adminKey}` } });
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('image/png');
    expect(file.headers.get('x-content-type-options')).toBe('nosniff');
    const bytes = Buffer.from(await file.arrayBuffer());
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(createHash('sha256').update(PNG).digest('hex'));

    // The phone shows it as sent, with its media id.
    const phone = await orgs.svc.call('GET', `/v1/sandbox/channels/${orgs.a.channelId}/customers/4915100000301/messages`, { key: orgs.a.adminKey });
    expect(phone.body.messages.at(-1)).toMatchObject({ direction: 'from_customer', type: 'image', text: 'the broken part', media: { id: m.content.mediaId, mimeType: 'image/png' } });
  });

  it('serves documents as downloads, never inline', async () => {
    expect((await send(orgs.a, '4915100000302', { kind: 'document', mimeType: 'text/plain', data: Buffer.from('<script>alert(1)</script>').toString('base64'), filename: 'notes.txt' })).status).toBe(201);
    const m = await received(orgs.a, '4915100000302', 'document');
    expect(m.content.filename).toBe('notes.txt');
    const file = await fetch(`${orgs.svc.url}/v1/channels/${orgs.a.channelId}/media/${m.content.mediaId}`, { headers: { authorization: `Bearer ${orgs.a.adminKey}` } });
    expect(file.headers.get('content-disposition')).toBe('attachment');
    expect(file.headers.get('content-security-policy')).toContain('sandbox');
  });

  it("answers 404 for another organization's media, on its own channel or the owner's", async () => {
    expect((await send(orgs.a, '4915100000303', { kind: 'image', mimeType: 'image/png', data: PNG.toString('base64') })).status).toBe(201);
    const m = await received(orgs.a, '4915100000303', 'image');
    const path = (org: MessagingOrg) => `/v1/channels/${org.channelId}/media/${m.content.mediaId}`;
    // B's key on A's channel: no such channel. B's key on B's channel: the media belongs to A's number.
    expect((await orgs.svc.call('GET', path(orgs.a), { key: orgs.b.adminKey })).status).toBe(404);
    expect((await orgs.svc.call('GET', path(orgs.b), { key: orgs.b.adminKey })).status).toBe(404);
    expect((await orgs.svc.call('GET', `/v1/channels/${orgs.a.channelId}/media/99999999`, { key: orgs.a.adminKey })).status).toBe(404);
    const bad = await orgs.svc.call("GET", `/v1/channels/${orgs.a.channelId}/media/bad!id`, { key: orgs.a.adminKey });
    expect(bad.status, JSON.stringify(bad.body)).toBe(404);
    expect((await orgs.svc.call('GET', path(orgs.a))).status).toBe(401);
  });

  it('refuses what the network would refuse, and sends nothing', async () => {
    const phone = '4915100000304';
    const cases: [Record<string, unknown>, number][] = [
      [{ kind: 'image', mimeType: 'image/gif', data: PNG.toString('base64') }, 400],
      [{ kind: 'audio', mimeType: 'audio/ogg', data: PNG.toString('base64'), caption: 'no' }, 400],
      [{ kind: 'image', mimeType: 'image/png', data: 'not base64!' }, 400],
      [{ kind: 'image', mimeType: 'image/png', data: '' }, 400],
      [{ kind: 'image', mimeType: 'image/png', data: Buffer.alloc(129 * 1024).toString('base64') }, 400],
      [{ kind: 'sticker', mimeType: 'image/webp', data: PNG.toString('base64') }, 400],
    ];
    for (const [body, status] of cases) {
      const r = await send(orgs.a, phone, body);
      expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(status);
      expect(r.body.error).toBeDefined();
    }
    const shown = await orgs.svc.call('GET', `/v1/sandbox/channels/${orgs.a.channelId}/customers/${phone}/messages`, { key: orgs.a.adminKey });
    expect(shown.body.messages).toEqual([]);
    expect((await send(orgs.b, phone, { kind: 'image', mimeType: 'image/png', data: PNG.toString('base64') })).status).toBe(201);
    expect((await orgs.svc.call('POST', `/v1/sandbox/channels/${orgs.b.channelId}/customers/${phone}/media`, { key: orgs.a.adminKey, body: { kind: 'image', mimeType: 'image/png', data: PNG.toString('base64') } })).status).toBe(404);
  });
});
