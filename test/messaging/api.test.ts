import { describe, expect, it } from 'vitest';
import { op, orderUpdate, useTwoOrgs, type MessagingOrg } from './messaging-helpers.js';

/**
 * Every messaging endpoint: bad input answered 4xx in the error shape (never
 * a 500, except the deprecated v1 send whose contract is an opaque 500),
 * and cross-organization isolation.
 */
describe('messaging API', () => {
  const orgs = useTwoOrgs({ env: { TEMPLATE_RATE_LIMIT_PER_MINUTE: '1000', GRAPH_API_BASE_URL: 'http://127.0.0.1:9/v27.0' } });

  const post = (path: string, key: string, body: unknown, headers?: Record<string, string>) => orgs.svc.call('POST', path, { key, body, headers });
  const expectError = (r: { status: number; body: any }, status: number, code?: string) => {
    expect(r.status, JSON.stringify(r.body)).toBe(status);
    expect(r.body).toMatchObject({ success: false, error: { code: code ?? expect.any(String), message: expect.any(String) } });
  };

  describe('POST /v2/wa/template', () => {
    const send = (body: unknown, key = orgs.a.adminKey) => post('/v2/wa/template', key, body);

    it('refuses malformed bodies with 400 and the failing fields', async () => {
      expectError(await orgs.svc.call('POST', '/v2/wa/template', { key: orgs.a.adminKey, rawBody: '{"channelId": ' }), 400, 'invalid_json');
      expectError(await send({}), 400, 'validation_failed');
      expectError(await send([]), 400, 'validation_failed');
      expectError(await send({ ...orderUpdate(orgs.a.channelId, '4915111111111'), template: undefined }), 400);
      for (const to of ['+4915111111111', '49 151 1111111', '4915-1111111', 'abc', '', '123', '0123456789']) {
        const r = await send(orderUpdate(orgs.a.channelId, to));
        expectError(r, 400, 'validation_failed');
        expect(r.body.error.details.some((d: { field: string }) => d.field === 'body.to')).toBe(true);
      }
      const wrongPolicy = orderUpdate(orgs.a.channelId, '4915111111111');
      (wrongPolicy.template.language as { policy: string }).policy = 'fallback';
      const r = await send(wrongPolicy);
      expectError(r, 400, 'validation_failed');
      expect(r.body.error.details[0].field).toBe('body.template.language.policy');
      const noPolicy = orderUpdate(orgs.a.channelId, '4915111111111');
      delete (noPolicy.template.language as { policy?: string }).policy;
      expectError(await send(noPolicy), 400);
      expectError(await send({ ...orderUpdate(orgs.a.channelId, '4915111111111'), template: { name: 'Order Update!', language: { code: 'en_US', policy: 'deterministic' } } }), 400);
    });

    it('refuses parameters of the wrong shape: media with both or neither of link and id, http links, wrong button parameter', async () => {
      const reminder = (header: unknown, extra: unknown[] = []) => ({
        channelId: orgs.a.channelId,
        to: '4915111111111',
        template: {
          name: 'appointment_reminder',
          language: { code: 'en_US', policy: 'deterministic' },
          components: [
            { type: 'header', parameters: [header] },
            { type: 'body', parameters: [{ type: 'text', text: 'Ann' }, { type: 'text', text: 'Friday' }] },
            { type: 'button', sub_type: 'url', index: 2, parameters: [{ type: 'text', text: 'B-77' }] },
            ...extra,
          ],
        },
      });
      expectError(await send(reminder({ type: 'image', image: { link: 'https://example.com/a.png', id: '123' } })), 400, 'validation_failed');
      expectError(await send(reminder({ type: 'image', image: {} })), 400, 'validation_failed');
      expectError(await send(reminder({ type: 'image', image: { link: 'http://example.com/a.png' } })), 400, 'validation_failed');
      expectError(await send(reminder({ type: 'image', image: { link: 'https://example.com/a.png' } }, [{ type: 'button', sub_type: 'quick_reply', index: 0, parameters: [{ type: 'text', text: 'x' }] }])), 400, 'validation_failed');
      expectError(await send(reminder({ type: 'location' })), 400, 'validation_failed');
      // Accepted with the right shape (currency and date_time are fine in the body).
      expect((await send(reminder({ type: 'image', image: { link: 'https://example.com/a.png' } }, [{ type: 'button', sub_type: 'quick_reply', index: 0, parameters: [{ type: 'payload', payload: 'CONFIRM-1' }] }]))).status).toBe(201);
    });

    it('checks the template registry: unknown template or language 404, not approved 422, too few / too many / wrong type 400', async () => {
      const r1 = await send({ ...orderUpdate(orgs.a.channelId, '4915111111111'), template: { name: 'no_such_template', language: { code: 'en_US', policy: 'deterministic' } } });
      expectError(r1, 404, 'template_not_found');
      const r2 = await send({ ...orderUpdate(orgs.a.channelId, '4915111111111'), template: { name: 'hello_world', language: { code: 'fr', policy: 'deterministic' } } });
      expectError(r2, 404, 'template_not_found');
      expect(r2.body.error.details.availableLanguages.sort()).toEqual(['en_US', 'es']);
      const paused = await send({ channelId: orgs.a.channelId, to: '4915111111111', template: { name: 'winter_promo', language: { code: 'en_US', policy: 'deterministic' }, components: [{ type: 'body', parameters: [{ type: 'text', text: 'x' }] }] } });
      expectError(paused, 422, 'template_not_approved');
      const few = await send(orderUpdate(orgs.a.channelId, '4915111111111', ['only', 'two']));
      expectError(few, 400, 'invalid_template_parameters');
      expect(few.body.error.details[0]).toMatchObject({ networkCode: 132000 });
      expectError(await send(orderUpdate(orgs.a.channelId, '4915111111111', ['a', 'b', 'c', 'd'])), 400, 'invalid_template_parameters');
      const none = await send({ channelId: orgs.a.channelId, to: '4915111111111', template: { name: 'order_update', language: { code: 'en_US', policy: 'deterministic' } } });
      expectError(none, 400, 'invalid_template_parameters');
      const extra = await send({ channelId: orgs.a.channelId, to: '4915111111111', template: { name: 'hello_world', language: { code: 'en_US', policy: 'deterministic' }, components: [{ type: 'body', parameters: [{ type: 'text', text: 'x' }] }] } });
      expectError(extra, 400, 'invalid_template_parameters');
      const wrongType = await send({
        channelId: orgs.a.channelId,
        to: '4915111111111',
        template: { name: 'appointment_reminder', language: { code: 'en_US', policy: 'deterministic' }, components: [{ type: 'header', parameters: [{ type: 'video', video: { link: 'https://example.com/v.mp4' } }] }, { type: 'body', parameters: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }, { type: 'button', sub_type: 'url', index: 2, parameters: [{ type: 'text', text: 'x' }] }] },
      });
      expectError(wrongType, 400, 'invalid_template_parameters');
      expect(wrongType.body.error.details[0]).toMatchObject({ networkCode: 132012 });
    });

    it('unknown channel, another organization\'s channel: 404; a web-chat channel: 422', async () => {
      expectError(await send(orderUpdate('ch_nope', '4915111111111')), 404, 'channel_not_found');
      expectError(await send(orderUpdate(orgs.b.channelId, '4915111111111')), 404, 'channel_not_found');
      expectError(await send(orderUpdate(orgs.a.webChannelId, '4915111111111')), 422, 'not_a_chat_channel');
    });

    it('401 without a key, 403 without message:send', async () => {
      expectError(await orgs.svc.call('POST', '/v2/wa/template', { body: orderUpdate(orgs.a.channelId, '4915111111111') }), 401);
      const k = await orgs.a.keyWith(['tickets:read']);
      const r = await send(orderUpdate(orgs.a.channelId, '4915111111111'), k);
      expectError(r, 403, 'insufficient_scope');
      expect(r.body.error.details.requiredScope).toBe('message:send');
    });

    it('a retry with the same Idempotency-Key gets the first answer and is charged once', async () => {
      const before = (await op(orgs.svc, 'GET', `/admin/v1/organizations/${orgs.a.id}/credits`)).body.balance;
      const h = { 'idempotency-key': 'order-A-1001' };
      const r1 = await post('/v2/wa/template', orgs.a.adminKey, orderUpdate(orgs.a.channelId, '4915122222222'), h);
      const r2 = await post('/v2/wa/template', orgs.a.adminKey, orderUpdate(orgs.a.channelId, '4915122222222'), h);
      expect(r1.status).toBe(201);
      expect(r2.body).toEqual(r1.body);
      expect((await op(orgs.svc, 'GET', `/admin/v1/organizations/${orgs.a.id}/credits`)).body.balance).toBe(before - 1);
      const phone = await orgs.svc.call('GET', `/v1/sandbox/channels/${orgs.a.channelId}/customers/4915122222222/messages`, { key: orgs.a.adminKey });
      expect(phone.body.messages).toHaveLength(1);
    });
  });

  describe('POST /v1/wa/template (deprecated)', () => {
    it('works like v2, with Deprecation and Link headers', async () => {
      const r = await post('/v1/wa/template', orgs.a.adminKey, orderUpdate(orgs.a.channelId, '4915133333333'));
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ success: true, messageId: expect.any(String) });
      expect(r.headers.get('deprecation')).toBe('true');
      expect(r.headers.get('link')).toContain('/v2/wa/template');
    });

    it('answers every failure with an opaque 500', async () => {
      const cases = [
        await post('/v1/wa/template', orgs.a.adminKey, {}),
        await post('/v1/wa/template', orgs.a.adminKey, orderUpdate(orgs.a.channelId, '+4915133333333')),
        await post('/v1/wa/template', orgs.a.adminKey, orderUpdate(orgs.b.channelId, '4915133333333')),
        await post('/v1/wa/template', orgs.a.adminKey, orderUpdate(orgs.a.channelId, '4915133333333', ['x'])),
        await orgs.svc.call('POST', '/v1/wa/template', { body: orderUpdate(orgs.a.channelId, '4915133333333') }),
        await orgs.svc.call('POST', '/v1/wa/template', { key: orgs.a.adminKey, rawBody: '{' }),
      ];
      for (const r of cases) {
        expect(r.status).toBe(500);
        expect(r.body).toEqual({ success: false, error: { code: 'internal_error', message: 'the request failed' } });
        expect(r.headers.get('deprecation')).toBe('true');
      }
    });
  });

  describe('POST /v1/messages/buttons', () => {
    const body = (over: Record<string, unknown> = {}, buttons: unknown = [{ id: 'a', title: 'A' }]) => ({ channelId: orgs.a.channelId, to: '4915144444444', interactive: { body: { text: 'Pick one' }, buttons }, ...over });
    const send = (b: unknown, key = orgs.a.adminKey) => post('/v1/messages/buttons', key, b);

    it('refuses 0 or 4 buttons, duplicate ids, long titles, bad numbers and malformed bodies', async () => {
      expectError(await send(body({}, [])), 400, 'validation_failed');
      expectError(await send(body({}, [1, 2, 3, 4].map((i) => ({ id: `b${i}`, title: `B${i}` })))), 400, 'validation_failed');
      const dup = await send(body({}, [{ id: 'same', title: 'One' }, { id: 'same', title: 'Two' }]));
      expectError(dup, 400, 'validation_failed');
      expect(dup.body.error.details[0].field).toBe('body.interactive.buttons.1.id');
      expectError(await send(body({}, [{ id: 'a', title: 'x'.repeat(21) }])), 400);
      expectError(await send(body({}, [{ id: '', title: 'A' }])), 400);
      expectError(await send(body({ to: '+4915144444444' })), 400);
      expectError(await send(body({ to: '49 151 44444444' })), 400);
      expectError(await send({ channelId: orgs.a.channelId, to: '4915144444444', interactive: { buttons: [{ id: 'a', title: 'A' }] } }), 400);
      expectError(await send({ channelId: orgs.a.channelId, to: '4915144444444' }), 400);
      expectError(await orgs.svc.call('POST', '/v1/messages/buttons', { key: orgs.a.adminKey, rawBody: 'nope', headers: { 'content-type': 'application/json' } }), 400, 'invalid_json');
    });

    it('unknown or another organization\'s channel 404; a web-chat channel answers success false', async () => {
      expectError(await send(body({ channelId: 'ch_nope' })), 404, 'channel_not_found');
      expectError(await send(body({ channelId: orgs.b.channelId })), 404, 'channel_not_found');
      const web = await send(body({ channelId: orgs.a.webChannelId }));
      expect(web).toMatchObject({ status: 200, body: { success: false } });
      expect(web.body.messageId).toBeUndefined();
    });
  });

  describe('POST /v1/messages/text', () => {
    const send = (over: Record<string, unknown> = {}, key = orgs.a.adminKey) => post('/v1/messages/text', key, { channelId: orgs.a.channelId, to: '4915199999999', text: { body: 'Hello!' }, ...over });
    it('validates, refuses outside the window, isolates organizations, and answers success false on a web chat', async () => {
      expectError(await send({ text: { body: '' } }), 400);
      expectError(await send({ text: { body: 'x'.repeat(4097) } }), 400);
      expectError(await send({ text: 'Hello!' }), 400);
      expectError(await send({ to: '+4915199999999' }), 400);
      expectError(await send({ to: '49151 99999999' }), 400);
      expectError(await send(), 422, 'outside_customer_service_window');
      expectError(await send({ channelId: orgs.b.channelId }), 404, 'channel_not_found');
      expectError(await send({}, await orgs.a.keyWith(['chat:send'])), 403, 'insufficient_scope');
      expect(await send({ channelId: orgs.a.webChannelId })).toMatchObject({ status: 200, body: { success: false } });
      await post(`/v1/sandbox/channels/${orgs.a.channelId}/customers/4915199999999/messages`, orgs.a.adminKey, { text: 'hi' });
      expect(await send()).toMatchObject({ status: 200, body: { success: true, messageId: expect.stringMatching(/^wamid\./) } });
    });
  });

  describe('POST /v1/messages/media', () => {
    const send = (media: unknown, over: Record<string, unknown> = {}) => post('/v1/messages/media', orgs.a.adminKey, { channelId: orgs.a.channelId, to: '4915155555555', media, ...over });

    it('refuses both or neither of link and mediaId, http links, mismatched or unknown types', async () => {
      expectError(await send({ type: 'image', image: { link: 'https://example.com/a.png', mediaId: '123' } }), 400);
      expectError(await send({ type: 'image', image: {} }), 400);
      expectError(await send({ type: 'image', image: { link: 'http://example.com/a.png' } }), 400);
      expectError(await send({ type: 'image', image: { link: 'not a url' } }), 400);
      expectError(await send({ type: 'image', video: { link: 'https://example.com/a.mp4' } }), 400);
      expectError(await send({ type: 'image' }), 400);
      expectError(await send({ type: 'gif', gif: { link: 'https://example.com/a.gif' } }), 400);
      expectError(await send({ type: 'image', image: { link: 'https://example.com/a.png', filename: 'a.png' } }), 400);
      expectError(await send({ type: 'sticker', sticker: { mediaId: '1', caption: 'hi' } }), 400);
      expectError(await send({ type: 'image', image: { link: 'https://example.com/a.png' } }, { to: '+4915155555555' }), 400);
    });

    it('unknown or another organization\'s channel 404; a web-chat channel answers success false; outside the window 422', async () => {
      expectError(await send({ type: 'audio', audio: { mediaId: '42' } }, { channelId: orgs.b.channelId }), 404, 'channel_not_found');
      expect(await send({ type: 'audio', audio: { mediaId: '42' } }, { channelId: orgs.a.webChannelId })).toMatchObject({ status: 200, body: { success: false } });
      expectError(await send({ type: 'audio', audio: { mediaId: '42' } }), 422, 'outside_customer_service_window');
    });
  });

  describe('POST /api/v1/whatsapp/send-template', () => {
    const body = (over: Record<string, unknown> = {}) => ({ to: '+4915166666666', template: 'order_update', language: 'en_US', components: [{ type: 'body', parameters: ['Ann', 'A-1', 'Monday'].map((text) => ({ type: 'text', text })) }], ...over });
    const send = (b: unknown, key = orgs.a.adminKey) => post('/api/v1/whatsapp/send-template', key, b);

    it('sends on the organization\'s chat channel: 200 message_id and status', async () => {
      const r = await send(body());
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ message_id: expect.stringMatching(/^wamid\./), status: 'accepted' });
      const phone = await orgs.svc.call('GET', `/v1/sandbox/channels/${orgs.a.channelId}/customers/4915166666666/messages`, { key: orgs.a.adminKey });
      expect(phone.body.messages[0]).toMatchObject({ id: r.body.message_id, type: 'template' });
      // The phone shows the template as the customer reads it, not its name.
      expect(phone.body.messages[0]).toMatchObject({
        text: 'Hi Ann, your order A-1 has shipped and arrives on Monday.',
        template: { name: 'order_update', language: 'en_US', body: 'Hi Ann, your order A-1 has shipped and arrives on Monday.', buttons: [{ type: 'quick_reply', text: 'Track my order' }, { type: 'quick_reply', text: 'Talk to an agent' }] },
      });
    });

    it('400 invalid payload, 401 bad or missing key, 403 without chat:send, 404 unknown or unapproved template', async () => {
      expectError(await send(body({ to: '4915166666666' })), 400);
      expectError(await send(body({ to: '+49 151 66666666' })), 400);
      expectError(await send(body({ template: { name: 'order_update' } })), 400);
      expectError(await send(body({ components: [{ type: 'body', parameters: [{ type: 'text', text: 'only one' }] }] })), 400, 'invalid_template_parameters');
      expectError(await send({}), 400);
      expectError(await orgs.svc.call('POST', '/api/v1/whatsapp/send-template', { body: body() }), 401);
      expectError(await send(body(), 'org_' + 'x'.repeat(43)), 401);
      expectError(await send(body(), await orgs.a.keyWith(['message:send'])), 403, 'insufficient_scope');
      expectError(await send(body({ template: 'no_such_template' })), 404, 'template_not_found');
      expectError(await send(body({ template: 'hello_world', language: 'fr', components: undefined })), 404, 'template_not_found');
      expectError(await send(body({ template: 'winter_promo', components: [{ type: 'body', parameters: [{ type: 'text', text: 'x' }] }] })), 404, 'template_not_found');
      expectError(await send(body({ channelId: orgs.b.channelId })), 404, 'channel_not_found');
    });
  });

  describe('GET /v1/sessions/{sessionId}/messages', () => {
    it('404 for an unknown session and for another organization\'s; 403 without the scope', async () => {
      const sent = await post('/v2/wa/template', orgs.a.adminKey, orderUpdate(orgs.a.channelId, '4915177777777'));
      const sid = await sessionOf(sent.body.messageId);
      expect((await orgs.svc.call('GET', `/v1/sessions/${sid}/messages`, { key: orgs.a.adminKey })).status).toBe(200);
      expectError(await orgs.svc.call('GET', `/v1/sessions/${sid}/messages`, { key: orgs.b.adminKey }), 404);
      expectError(await orgs.svc.call('GET', '/v1/sessions/nope/messages', { key: orgs.a.adminKey }), 404);
      expectError(await orgs.svc.call('GET', `/v1/sessions/${sid}/messages`, { key: await orgs.a.keyWith(['message:send']) }), 403, 'insufficient_scope');
      expectError(await orgs.svc.call('GET', `/v1/sessions/${sid}/messages`), 401);
    });
  });

  describe('sandbox customer', () => {
    const path = (org: MessagingOrg, channelId: string, phone: string, what: string) => `/v1/sandbox/channels/${channelId}/customers/${phone}/${what}`;
    it('validates, and only plays customers of the caller\'s own sandbox channels', async () => {
      expectError(await post(path(orgs.a, orgs.a.channelId, '+4915188888888', 'messages'), orgs.a.adminKey, { text: 'hi' }), 404);
      expectError(await post(path(orgs.a, orgs.a.channelId, '4915188888888', 'messages'), orgs.a.adminKey, { text: '' }), 400);
      expectError(await post(path(orgs.a, orgs.a.channelId, '4915188888888', 'messages'), orgs.a.adminKey, {}), 400);
      expectError(await post(path(orgs.a, orgs.a.channelId, '4915188888888', 'button-replies'), orgs.a.adminKey, { messageId: 'wamid.nope', buttonId: 'x' }), 404);
      expectError(await post(path(orgs.a, orgs.a.channelId, '4915188888888', 'quick-replies'), orgs.a.adminKey, { messageId: 'wamid.nope', index: 'x' }), 400);
      expectError(await post(path(orgs.a, orgs.b.channelId, '4915188888888', 'messages'), orgs.a.adminKey, { text: 'hi' }), 404, 'channel_not_found');
      expectError(await orgs.svc.call('GET', path(orgs.a, orgs.b.channelId, '4915188888888', 'messages'), { key: orgs.a.adminKey }), 404);
      expectError(await post(path(orgs.a, orgs.a.webChannelId, '4915188888888', 'messages'), orgs.a.adminKey, { text: 'hi' }), 409, 'not_a_sandbox_channel');
      // B cannot tap a button of a message A sent (it never sees A's channel).
      const sent = await post('/v2/wa/template', orgs.a.adminKey, orderUpdate(orgs.a.channelId, '4915188888888'));
      expectError(await post(path(orgs.b, orgs.a.channelId, '4915188888888', 'quick-replies'), orgs.b.adminKey, { messageId: sent.body.messageId, index: 0 }), 404);
      expectError(await post(path(orgs.a, orgs.a.channelId, '4915188888888', 'quick-replies'), orgs.a.adminKey, { messageId: sent.body.messageId, index: 7 }), 400, 'no_such_button');
      expectError(await post(path(orgs.a, orgs.a.channelId, '4915188888888', 'button-replies'), orgs.a.adminKey, { messageId: sent.body.messageId, buttonId: 'x' }), 400, 'not_an_interactive_message');
    });
  });

  describe('channels and templates', () => {
    it('an API key lists its own organization\'s channels and their templates only', async () => {
      const mine = await orgs.svc.call('GET', '/v1/channels', { key: orgs.a.adminKey });
      expect(mine.body.channels.map((c: { id: string }) => c.id).sort()).toEqual([orgs.a.channelId, orgs.a.webChannelId].sort());
      expect(JSON.stringify(mine.body)).not.toMatch(/EAASBX|appSecret|accessToken/);
      const t = await orgs.svc.call('GET', `/v1/channels/${orgs.a.channelId}/templates`, { key: orgs.a.adminKey });
      expect(t.body.templates.find((x: { name: string; language: string }) => x.name === 'order_update' && x.language === 'en_US')).toMatchObject({
        category: 'UTILITY',
        status: 'APPROVED',
        variables: [{ component: 'body', params: ['textual', 'textual', 'textual'] }, { component: 'button', index: 0 }, { component: 'button', index: 1 }],
      });
      expectError(await orgs.svc.call('GET', `/v1/channels/${orgs.b.channelId}/templates`, { key: orgs.a.adminKey }), 404);
      expectError(await orgs.svc.call('GET', `/v1/channels/${orgs.a.webChannelId}/templates`, { key: orgs.a.adminKey }), 422, 'not_a_chat_channel');
    });

    it('operators create, sync and manage templates; bad bodies are 400; channels of another organization are 404', async () => {
      const base = `/admin/v1/organizations/${orgs.a.id}`;
      expectError(await op(orgs.svc, 'POST', `${base}/channels`, { kind: 'whatsapp_cloud', name: 'x', network: 'graph' }), 400);
      expectError(await op(orgs.svc, 'POST', `${base}/channels`, { kind: 'whatsapp_cloud', name: 'x', network: 'sandbox', accessToken: 'EAAxxxxxxxxxxx' }), 400);
      expectError(await op(orgs.svc, 'POST', `${base}/channels`, { kind: 'telegram', name: 'x' }), 400);
      expectError(await op(orgs.svc, 'POST', `/admin/v1/organizations/nope/channels`, { kind: 'web_chat', name: 'x' }), 404);
      expectError(await op(orgs.svc, 'GET', `/admin/v1/organizations/${orgs.b.id}/channels/${orgs.a.channelId}`), 404);
      expectError(await op(orgs.svc, 'POST', `/admin/v1/organizations/${orgs.b.id}/channels/${orgs.a.channelId}/templates/sync`), 404);
      expectError(await op(orgs.svc, 'DELETE', `/admin/v1/organizations/${orgs.b.id}/channels/${orgs.a.channelId}`), 404);
      expectError(await orgs.svc.call('POST', `${base}/channels`, { key: orgs.a.adminKey, body: { kind: 'web_chat', name: 'x' } }), 401);
      expectError(await op(orgs.svc, 'POST', `${base}/channels/${orgs.a.channelId}/templates`, { name: 'x', language: 'en_US', category: 'UTILITY', components: [{ type: 'HEADER', text: 'no body' }] }), 400);
      expectError(await op(orgs.svc, 'POST', `${base}/credits/top-up`, { amount: -5 }), 400);
      expectError(await op(orgs.svc, 'POST', `${base}/credits/top-up`, { amount: 1.5 }), 400);

      // A graph channel: credentials stored sealed, a verify token generated and shown once.
      const graph = await op(orgs.svc, 'POST', `${base}/channels`, { kind: 'whatsapp_cloud', name: 'Real', network: 'graph', phoneNumberId: '106540352242922', businessAccountId: '102290129340398', accessToken: 'EAAJBrealtoken', appSecret: 'app-secret-123' });
      expect(graph.status).toBe(201);
      expect(graph.body.webhook).toEqual({ url: expect.stringContaining(`/webhooks/whatsapp/${graph.body.id}`), verifyToken: expect.any(String) });
      expect(graph.body.templateSync).toMatchObject({ ok: false, error: 'the chat network is unreachable' }); // GRAPH_API_BASE_URL points nowhere here
      expect((await op(orgs.svc, 'GET', `${base}/channels/${graph.body.id}`)).body.webhook.verifyToken).toBeUndefined();
      expectError(await op(orgs.svc, 'POST', `/admin/v1/organizations/${orgs.b.id}/channels`, { kind: 'whatsapp_cloud', name: 'Dup', network: 'graph', phoneNumberId: '106540352242922', businessAccountId: '102290129340398', accessToken: 'EAAJBothertoken', appSecret: 'other-secret' }), 409, 'phone_number_in_use');

      // Operator-managed entry, then a sync: network templates come back, the operator's own stays.
      const put = await op(orgs.svc, 'POST', `${base}/channels/${orgs.a.channelId}/templates`, { name: 'local_only', language: 'en_US', category: 'MARKETING', components: [{ type: 'BODY', text: 'Hey {{1}}' }] });
      expect(put).toMatchObject({ status: 201, body: { source: 'operator', variables: [{ component: 'body', params: ['textual'] }] } });
      const sync = await op(orgs.svc, 'POST', `${base}/channels/${orgs.a.channelId}/templates/sync`);
      expect(sync.status).toBe(200);
      expect(sync.body.synced).toBe(7);
      const names = (await op(orgs.svc, 'GET', `${base}/channels/${orgs.a.channelId}/templates`)).body.templates.map((t: { name: string }) => t.name);
      expect(names).toContain('local_only');
      expect((await op(orgs.svc, 'DELETE', `${base}/channels/${orgs.a.channelId}/templates/local_only/en_US`)).status).toBe(204);
      expectError(await op(orgs.svc, 'DELETE', `${base}/channels/${orgs.a.channelId}/templates/local_only/en_US`), 404);
      expect((await op(orgs.svc, 'DELETE', `${base}/channels/${graph.body.id}`)).status).toBe(204);
    });
  });

  async function sessionOf(messageId: string): Promise<string> {
    const m = await orgs.svc.running.services.messaging.stores.messages.getByNetworkId(orgs.a.id, messageId);
    return m!.sessionId;
  }
});
