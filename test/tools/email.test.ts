import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { MAX_ATTACHMENT_BYTES } from '../../src/tools/email-tools.js';
import { startTestService, type TestOrg, type TestService } from '../harness/service.js';
import { call, errorText, mcpClient, structured } from '../mcp/helpers.js';
import { control, fault, signIn } from './helpers.js';

const EMAIL_TOOLS = ['list_emails', 'search_emails', 'get_email', 'get_attachment', 'send_email', 'reply_email', 'create_draft', 'list_labels', 'modify_email'];

describe('email tool against the sandbox mailbox over HTTP', () => {
  let svc: TestService;
  let a: TestOrg;
  let b: TestOrg;
  let toolId: string;
  let client: Client;
  beforeAll(async () => {
    svc = await startTestService();
    a = await svc.createOrg('A');
    b = await svc.createOrg('B');
  });
  afterAll(async () => {
    await client?.close();
    await svc?.close();
  });

  it('connect → sign in at the consent page → active', async () => {
    const r = await svc.call('POST', '/v1/integrations/email/connect', { key: a.adminKey, body: { name: 'Support inbox' } });
    expect(r.status).toBe(201);
    expect(r.body.status).toBe('pending_authorization');
    expect(r.body.sandbox).toBe(true);
    expect(r.body.mcp_url).toBe(`${svc.url}/mcp/${r.body.id}`);
    const redirect = new URL(r.body.redirect_url);
    expect(redirect.searchParams.get('code_challenge_method')).toBe('S256');
    expect(redirect.searchParams.get('access_type')).toBe('offline');
    toolId = r.body.id;
    const pending = await svc.call('POST', `/mcp/${toolId}`, { key: a.adminKey, rawBody: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), headers: { accept: 'application/json, text/event-stream' } });
    expect(pending.status).toBe(409);
    expect(JSON.stringify(pending.body)).toMatch(/pending_authorization/);
    const cb = await signIn(svc, r.body.redirect_url, { email: 'support@shop.example' });
    expect(cb.status).toBe(200);
    expect(cb.body).toMatch(/connected/i);
    const t = await svc.call('GET', `/v1/tools/${toolId}`, { key: a.adminKey });
    expect(t.body).toMatchObject({ status: 'active', account: 'support@shop.example', integration: 'email' });
    expect(JSON.stringify(t.body)).not.toMatch(/ya29|1\/\/0/);
  });

  it('an MCP SDK client lists and calls every email tool', async () => {
    client = await mcpClient(`${svc.running.mcpUrl}/mcp/${toolId}`, a.adminKey);
    const listed = await client.listTools();
    expect(listed.tools.map((t) => t.name).sort()).toEqual([...EMAIL_TOOLS].sort());
    for (const t of listed.tools) {
      expect(t.description!.length).toBeGreaterThan(80);
      expect(t.outputSchema).toBeDefined();
      expect(t.annotations).toMatchObject({ openWorldHint: expect.any(Boolean), readOnlyHint: expect.any(Boolean) });
    }
    const inbox = structured(await call(client, 'list_emails', {}));
    expect(inbox.emails.length).toBe(3);
    expect(inbox.emails[0].subject).toBe('Order #1042 arrived damaged');
    expect(inbox.emails[0].unread).toBe(true);
    const found = structured(await call(client, 'search_emails', { query: 'has:attachment from:billing' }));
    expect(found.emails).toHaveLength(1);
    expect(found.emails[0].subject).toBe('Your receipt — November');
    const receipt = structured(await call(client, 'get_email', { emailId: found.emails[0].id }));
    expect(receipt.text).toMatch(/EUR 42.00/);
    expect(receipt.attachments).toEqual([expect.objectContaining({ filename: 'receipt-11.pdf', mimeType: 'application/pdf' })]);
    const pdf = structured(await call(client, 'get_attachment', { emailId: receipt.id, attachmentId: receipt.attachments[0].attachmentId }));
    expect(pdf).toEqual({ filename: 'receipt-11.pdf', mimeType: 'application/pdf', size: 24, data: Buffer.from('%PDF-1.4 sandbox receipt').toString('base64'), text: null });
    // Only an attachment the message lists: one of another message is not fetched.
    expect(errorText(await call(client, 'get_attachment', { emailId: inbox.emails[0].id, attachmentId: receipt.attachments[0].attachmentId }))).toMatch(/no such attachment/);
    const orig = inbox.emails[0];
    const reply = structured(await call(client, 'reply_email', { emailId: orig.id, body: 'Sorry to hear that — a new lid is on its way.' }));
    expect(reply.threadId).toBe(orig.threadId);
    const sent = structured(await call(client, 'get_email', { emailId: reply.id }));
    expect(sent.subject).toBe('Re: Order #1042 arrived damaged');
    expect(sent.to).toMatch(/ada@example.com/);
    expect(sent.text).toMatch(/a new lid/);
    const self = structured(await call(client, 'send_email', { to: ['support@shop.example'], subject: 'Grüße – note to self', body: 'Ünïcödé body' }));
    const back = structured(await call(client, 'get_email', { emailId: self.id }));
    expect(back.subject).toBe('Grüße – note to self');
    expect(back.text).toBe('Ünïcödé body');
    expect(back.labels).toContain('INBOX');
    const draft = structured(await call(client, 'create_draft', { replyToEmailId: orig.id, body: 'Draft reply' }));
    expect(draft.threadId).toBe(orig.threadId);
    const labels = structured(await call(client, 'list_labels', {}));
    expect(labels.labels.map((l: { name: string }) => l.name)).toEqual(expect.arrayContaining(['INBOX', 'UNREAD', 'Receipts']));
    const read = structured(await call(client, 'modify_email', { emailId: orig.id, markRead: true, star: true, addLabels: ['receipts'] }));
    expect(read.unread).toBe(false);
    expect(read.labels).toEqual(expect.arrayContaining(['STARRED', 'Label_1']));
  });

  it('invalid arguments, unknown ids and labels are tool errors the model can act on', async () => {
    expect(errorText(await call(client, 'send_email', { to: ['not an address'], subject: 's', body: 'b' }))).toMatch(/to\[0\]: an email address/);
    expect(errorText(await call(client, 'get_email', { emailId: 'ffffffffffffffff' }))).toMatch(/not_found/);
    expect(errorText(await call(client, 'modify_email', { emailId: 'ffffffffffffffff', addLabels: ['No Such Label'] }))).toMatch(/list_labels/);
    expect(errorText(await call(client, 'modify_email', { emailId: 'ffffffffffffffff' }))).toMatch(/at least one change/);
    // An attachment past get_attachment's bound is refused, not sent to the model.
    const big = ['From: Archive <archive@example.com>', 'To: support@shop.example', 'Subject: Full export', 'MIME-Version: 1.0', 'Content-Type: multipart/mixed; boundary="b"', '', '--b', 'Content-Type: text/plain', '', 'Attached.', '--b', 'Content-Type: application/zip; name="export.zip"', 'Content-Disposition: attachment; filename="export.zip"', 'Content-Transfer-Encoding: base64', '', Buffer.alloc(MAX_ATTACHMENT_BYTES + 1, 7).toString('base64'), '--b--', ''].join('\r\n');
    await svc.running.services.tools!.sandbox!.mailbox.deliver('support@shop.example', big, ['INBOX']);
    const [exported] = structured(await call(client, 'search_emails', { query: 'subject:"Full export"' })).emails;
    const listed = structured(await call(client, 'get_email', { emailId: exported.id }));
    expect(listed.attachments).toEqual([expect.objectContaining({ filename: 'export.zip', size: MAX_ATTACHMENT_BYTES + 1 })]);
    expect(errorText(await call(client, 'get_attachment', { emailId: exported.id, attachmentId: listed.attachments[0].attachmentId }))).toMatch(/attachment_too_large/);
  });

  it('provider 429 with Retry-After, 500 and garbage become tool errors; a 401 refreshes once and succeeds', async () => {
    await fault(svc, { target: 'gmail', status: 429, retryAfter: 7 });
    expect(errorText(await call(client, 'list_labels', {}))).toMatch(/rate-limiting.*wait 7 seconds/);
    await fault(svc, { target: 'gmail', status: 500 });
    expect(errorText(await call(client, 'list_labels', {}))).toMatch(/provider_unavailable/);
    await fault(svc, { target: 'gmail', status: 502, garbage: true });
    expect(errorText(await call(client, 'list_labels', {}))).toMatch(/provider_unavailable|provider_bad_response/);
    await fault(svc, { target: 'gmail', status: 200, garbage: true });
    expect(errorText(await call(client, 'list_labels', {}))).toMatch(/provider_bad_response/);
    const before = (await control(svc, '/stats')).refreshGrants;
    await control(svc, '/google/users/support@shop.example/expire-tokens');
    structured(await call(client, 'list_labels', {}));
    expect((await control(svc, '/stats')).refreshGrants).toBe(before + 1);
  });

  it('another organization sees nothing of the tool, anywhere', async () => {
    expect((await svc.call('GET', `/v1/tools/${toolId}`, { key: b.adminKey })).status).toBe(404);
    expect((await svc.call('DELETE', `/v1/tools/${toolId}`, { key: b.adminKey })).status).toBe(404);
    expect((await svc.call('GET', '/v1/tools', { key: b.adminKey })).body.tools).toEqual([]);
    const other = await svc.call('POST', `/mcp/${toolId}`, { key: b.adminKey, rawBody: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), headers: { accept: 'application/json, text/event-stream' } });
    expect(other.status).toBe(404);
    const reconnect = await svc.call('POST', '/v1/integrations/email/connect', { key: b.adminKey, body: { name: 'x', tool_id: toolId } });
    expect(reconnect.status).toBe(404);
  });

  it('invalid_grant marks the tool for re-authorization; connect with tool_id signs in again', async () => {
    await control(svc, '/google/users/support@shop.example/revoke');
    const r = await call(client, 'list_labels', {});
    expect(errorText(r)).toMatch(/reauthorization_required/);
    const t = await svc.call('GET', `/v1/tools/${toolId}`, { key: a.adminKey });
    expect(t.body.status).toBe('reauthorization_required');
    const again = await svc.call('POST', '/v1/integrations/email/connect', { key: a.adminKey, body: { name: 'Support inbox', tool_id: toolId } });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(toolId);
    await signIn(svc, again.body.redirect_url, { email: 'support@shop.example' });
    structured(await call(client, 'list_labels', {}));
  });

  it('delete revokes at the provider, removes the credentials, and the MCP endpoint refuses', async () => {
    const store = svc.running.services.tools!.repo;
    expect(await store.getCredentials(toolId)).not.toBeNull();
    const del = await svc.call('DELETE', `/v1/tools/${toolId}`, { key: a.adminKey });
    expect(del.body).toEqual({ id: toolId, deleted: true, revoked_at_provider: true });
    expect(await store.getCredentials(toolId)).toBeNull();
    expect(await svc.running.services.tools!.sandbox!.identity.liveGrants('support@shop.example')).toBe(0);
    expect((await svc.call('GET', `/v1/tools/${toolId}`, { key: a.adminKey })).status).toBe(404);
    await expect(client.listTools()).rejects.toThrow(/404|No MCP server/);
  });
});
