import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { OPERATOR_TOKEN, runCli, startTestService, type TestOrg, type TestService } from '../harness/service.js';
import { inUserWords, renderMessage } from '../../src/validation-messages.js';
import { commands } from '../../src/cli/admin.js';
import { PASSWORD_MIN_LENGTH } from '../../src/domain/password-rule.js';
import { call, errorText, mcpClient } from '../mcp/helpers.js';
import { InboxClient } from '../inbox/client.js';

describe('validation errors in the caller’s words', () => {
  let svc: TestService;
  let org: TestOrg;
  beforeAll(async () => {
    svc = await startTestService();
    org = await svc.createOrg('Words');
  });
  afterAll(() => svc?.close());

  const refused = async (method: string, path: string, body: unknown, key = org.adminKey) => {
    const r = await svc.call(method, path, { key, body });
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.error.code).toBe('validation_failed');
    return r.body.error as { message: string; details: { field: string; message: string; code: string }[] };
  };

  it('names a missing field as it is sent, and keeps details[].field machine-readable', async () => {
    const e = await refused('POST', '/v1/tickets', { subject: 'Printer on fire' });
    expect(e.message).toBe('description is required');
    expect(e.details).toEqual([{ field: 'body.description', message: 'description is required', code: 'invalid_type' }]);
  });

  it('says what a nested field, an enum, a wrong type, an unknown field and a query value must be', async () => {
    const send = await refused('POST', '/v2/wa/template', { to: '4915112345678', template: { name: 'order_update', language: { policy: 'deterministic' } } });
    expect(send.message).toBe('template.language.code is required');
    expect(send.details[0]!.field).toBe('body.template.language.code');

    expect((await refused('POST', '/v1/tickets', { subject: 'S', description: 'D', priority: 'critical' })).message).toBe('priority must be one of "low", "medium", "high", "urgent"');
    expect((await refused('POST', '/v1/tickets', { subject: 'S', description: 42 })).message).toBe('description must be a string, not a number');
    expect((await refused('POST', '/v1/tickets', { subject: 'S', description: '' })).message).toBe('description must not be empty');
    expect((await refused('POST', '/v1/tickets', { subject: 'S', description: 'D', colour: 'red' })).message).toBe('colour is not a field here');

    const q = await svc.call('GET', '/v1/tickets?page=0', { key: org.adminKey });
    expect(q.status).toBe(400);
    expect(q.body.error.message).toBe('page must be at least 1');
    expect(q.body.error.details[0].field).toBe('query.page');
  });

  it('lists the first few problems in the message and all of them in details', async () => {
    const e = await refused('POST', '/v1/tickets', { subject: 1, description: 5, priority: 'critical', status: 'nope', colour: 1 });
    expect(e.details.length).toBeGreaterThan(3);
    expect(e.message).toMatch(/^subject must be a string, not a number; description must be a string, not a number; /);
    expect(e.message).toMatch(/and \d+ more \(see details\)$/);
  });

  it('words MCP tool arguments and inbox frames the same way', async () => {
    const client = await mcpClient(`${svc.running.mcpUrl}/mcp/platform`, org.adminKey);
    try {
      const r = await call(client, 'create_ticket', { subject: 'Printer on fire' });
      expect(r.isError).toBe(true);
      expect(errorText(r)).toContain('description is required');
    } finally {
      await client.close();
    }
    const inbox = await InboxClient.connect(svc.url, org.agentKey);
    try {
      expect(await inbox.command({ type: 'take', conversationId: 'not an id' })).toMatchObject({
        type: 'error',
        error: { code: 'validation_failed', details: [{ field: 'conversationId', message: expect.stringMatching(/^a conversation id is/) }] },
      });
      expect(await inbox.command({ type: 'take' })).toMatchObject({ error: { message: 'the command is invalid: conversationId is required', details: [{ field: 'conversationId', message: 'conversationId is required' }] } });
    } finally {
      inbox.close();
    }
  });

  it('keeps the message a schema states itself', async () => {
    expect((await refused('PATCH', `/v1/users/${org.agentId}`, {})).message).toBe('send at least one of name, role, active, capacity');
  });

  it('words array positions, formats and bounds', () => {
    const s = z.object({ buttons: z.array(z.object({ title: z.string().max(3) })).min(1), url: z.url(), email: z.email(), n: z.number().int().max(5) }).strict();
    const words = (schema: z.ZodType, v: unknown) => schema.safeParse(v, { error: inUserWords }).error!.issues.map((i) => renderMessage(i.message, i.path, 'body'));
    const issues = words(s, { buttons: [{ title: 'ok' }, { title: 'too long' }], url: 'nope', email: 'x', n: 9, extra: 1 });
    expect(issues).toEqual(['buttons[1].title must be at most 3 characters long', 'url must be a URL', 'email must be an email address', 'n must be at most 5', 'extra is not a field here']);
    expect(words(z.array(z.string()).min(1), [])).toEqual(['the request body must have at least one item']);
    // Inside a union zod words the issue before it knows the whole path.
    const union = z.object({ m: z.discriminatedUnion('kind', [z.object({ kind: z.literal('a'), x: z.string() }), z.object({ kind: z.literal('b') })]) });
    expect(words(union, { m: { kind: 'a', x: 1 } })).toEqual(['m.x must be a string, not a number']);
  });
});

describe('one password rule everywhere', () => {
  let svc: TestService;
  let org: TestOrg;
  beforeAll(async () => {
    svc = await startTestService();
    org = await svc.createOrg('Passwords');
  });
  afterAll(() => svc?.close());

  const short = 'x'.repeat(PASSWORD_MIN_LENGTH - 1);
  const enough = 'x'.repeat(PASSWORD_MIN_LENGTH);
  const rule = `password must be at least ${PASSWORD_MIN_LENGTH} characters long`;

  it('the operator API and its CLI refuse one character short, and accept the minimum', async () => {
    const r = await svc.call('POST', `/admin/v1/organizations/${org.id}/users`, { key: OPERATOR_TOKEN, body: { email: 'short@x.io', name: 'S', role: 'agent', password: short } });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toBe(rule);

    const cli = await runCli(svc, 'user', 'create', '--org', org.id, '--email', 'cli@x.io', '--name', 'Cli', '--role', 'agent', '--password', short);
    expect(cli.code).toBe(1);
    expect(cli.err).toContain(rule);
    expect((await runCli(svc, 'user', 'create', '--org', org.id, '--email', 'cli@x.io', '--name', 'Cli', '--role', 'agent', '--password', enough)).code).toBe(0);

    const reset = await svc.call('POST', `/admin/v1/organizations/${org.id}/users/${org.agentId}/password`, { key: OPERATOR_TOKEN, body: { password: short } });
    expect(reset.body.error.message).toBe(rule);
  });

  it('an admin adding a user and a user changing theirs get the same rule', async () => {
    const add = await svc.call('POST', '/v1/users', { key: org.adminKey, body: { email: 'new@x.io', name: 'N', role: 'agent', password: short } });
    expect(add.status).toBe(400);
    expect(add.body.error.message).toBe(rule);
    expect((await svc.call('POST', '/v1/users', { key: org.adminKey, body: { email: 'new@x.io', name: 'N', role: 'agent', password: enough } })).status).toBe(201);
  });

  it('the CLI help says the rule it is held to', () => {
    expect(commands['user create']!.usage).toContain(`at least ${PASSWORD_MIN_LENGTH} characters`);
    expect(commands['user reset-password']!.usage).toContain(`at least ${PASSWORD_MIN_LENGTH} characters`);
  });
});
