import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestService, type TestOrg, type TestService } from '../harness/service.js';
import { call, errorText, mcpClient, structured } from '../mcp/helpers.js';
import { fault, signIn } from './helpers.js';

const CALENDAR_TOOLS = ['list_calendars', 'check_availability', 'list_events', 'get_event', 'create_event', 'update_event', 'delete_event'];

describe('calendar tool against the sandbox calendar over HTTP', () => {
  let svc: TestService;
  let a: TestOrg;
  let b: TestOrg;
  let toolId: string;
  let client: Client;
  beforeAll(async () => {
    svc = await startTestService();
    a = await svc.createOrg('A');
    b = await svc.createOrg('B');
    const r = await svc.call('POST', '/v1/integrations/calendar/connect', { key: a.adminKey, body: { name: 'Team calendar' } });
    expect(r.status).toBe(201);
    toolId = r.body.id;
    await signIn(svc, r.body.redirect_url, { email: 'cal@shop.example' });
    client = await mcpClient(`${svc.url}/mcp/${toolId}`, a.adminKey);
  });
  afterAll(async () => {
    await client?.close();
    await svc?.close();
  });

  it('is active for its organization and lists every calendar tool', async () => {
    const t = await svc.call('GET', `/v1/tools/${toolId}`, { key: a.adminKey });
    expect(t.body).toMatchObject({ status: 'active', integration: 'calendar', account: 'cal@shop.example' });
    expect((await client.listTools()).tools.map((x) => x.name).sort()).toEqual([...CALENDAR_TOOLS].sort());
  });

  it('calls every calendar tool; wall-clock times are read in their time zone, free/busy respects them', async () => {
    const cals = structured(await call(client, 'list_calendars', {}));
    expect(cals.calendars.find((c: { primary: boolean }) => c.primary)).toMatchObject({ id: 'cal@shop.example', timeZone: 'Europe/Berlin' });
    // 2027-01-15 10:00 in Berlin is 09:00 UTC (winter time).
    const created = structured(
      await call(client, 'create_event', { summary: 'Call with Ada', start: '2027-01-15T10:00:00', end: '2027-01-15T11:00', timeZone: 'Europe/Berlin', attendees: ['ada@example.com'], location: 'Phone' }),
    );
    expect(created.start.dateTime).toBe('2027-01-15T10:00:00+01:00');
    expect(created.attendees).toEqual([{ email: 'ada@example.com', responseStatus: 'needsAction' }]);
    const avail = structured(await call(client, 'check_availability', { timeMin: '2027-01-15T08:00:00Z', timeMax: '2027-01-15T12:00:00Z' }));
    expect(avail.calendars[0].busy).toEqual([{ start: '2027-01-15T09:00:00+00:00', end: '2027-01-15T10:00:00+00:00' }]);
    expect(avail.free).toEqual([
      { start: '2027-01-15T08:00:00+00:00', end: '2027-01-15T09:00:00+00:00' },
      { start: '2027-01-15T10:00:00+00:00', end: '2027-01-15T12:00:00+00:00' },
    ]);
    const ny = structured(await call(client, 'check_availability', { timeMin: '2027-01-15T00:00:00-05:00', timeMax: '2027-01-16T00:00:00-05:00', timeZone: 'America/New_York' }));
    expect(ny.calendars[0].busy).toEqual([{ start: '2027-01-15T04:00:00-05:00', end: '2027-01-15T05:00:00-05:00' }]);
    const listed = structured(await call(client, 'list_events', { timeMin: '2027-01-01T00:00:00Z', timeMax: '2027-02-01T00:00:00Z', query: 'ada' }));
    expect(listed.events.map((e: { id: string }) => e.id)).toEqual([created.id]);
    const got = structured(await call(client, 'get_event', { eventId: created.id, timeZone: 'UTC' }));
    expect(got.summary).toBe('Call with Ada');
    const moved = structured(await call(client, 'update_event', { eventId: created.id, start: '2027-01-15T14:00:00+01:00', end: '2027-01-15T15:00:00+01:00', summary: 'Call with Ada (moved)' }));
    expect(moved.summary).toBe('Call with Ada (moved)');
    const after = structured(await call(client, 'check_availability', { timeMin: '2027-01-15T08:00:00Z', timeMax: '2027-01-15T12:00:00Z' }));
    expect(after.calendars[0].busy).toEqual([]);
    expect(structured(await call(client, 'delete_event', { eventId: created.id }))).toEqual({ eventId: created.id, deleted: true });
    expect(errorText(await call(client, 'delete_event', { eventId: created.id }))).toMatch(/not_found/);
    const none = structured(await call(client, 'list_events', { timeMin: '2027-01-01T00:00:00Z', timeMax: '2027-02-01T00:00:00Z' }));
    expect(none.events).toEqual([]);
  });

  it('bad arguments are tool errors naming the field', async () => {
    expect(errorText(await call(client, 'create_event', { summary: 'x', start: '2027-01-15T10:00:00', end: '2027-01-15T11:00:00' }))).toMatch(/no UTC offset.*timeZone/);
    expect(errorText(await call(client, 'create_event', { summary: 'x', start: '2027-01-15T11:00:00Z', end: '2027-01-15T10:00:00Z' }))).toMatch(/time range is empty/);
    expect(errorText(await call(client, 'check_availability', { timeMin: 'tomorrow', timeMax: '2027-01-15T10:00:00Z' }))).toMatch(/timeMin/);
    expect(errorText(await call(client, 'list_events', { timeZone: 'Mars/Olympus' }))).toMatch(/timeZone/);
    expect(errorText(await call(client, 'list_events', { calendarId: 'nobody@example.com' }))).toMatch(/not_found/);
  });

  it('token endpoint down during a refresh: a temporary tool error, the tool stays active', async () => {
    await fetch(`${svc.url}/sandbox/providers/control/google/users/cal@shop.example/expire-tokens`, { method: 'POST' });
    await fault(svc, { target: 'token', status: 503 });
    expect(errorText(await call(client, 'list_calendars', {}))).toMatch(/provider_unavailable/);
    expect((await svc.call('GET', `/v1/tools/${toolId}`, { key: a.adminKey })).body.status).toBe('active');
    structured(await call(client, 'list_calendars', {}));
  });

  it('another organization cannot see, use or delete the tool', async () => {
    expect((await svc.call('GET', `/v1/tools/${toolId}`, { key: b.adminKey })).status).toBe(404);
    expect((await svc.call('DELETE', `/v1/tools/${toolId}`, { key: b.adminKey })).status).toBe(404);
    await expect(mcpClient(`${svc.url}/mcp/${toolId}`, b.adminKey)).rejects.toThrow(/404|No MCP server/);
  });

  it('delete: credentials gone, grant revoked, endpoint refuses', async () => {
    expect((await svc.call('DELETE', `/v1/tools/${toolId}`, { key: a.adminKey })).body.revoked_at_provider).toBe(true);
    expect(await svc.running.services.tools!.repo.getCredentials(toolId)).toBeNull();
    expect(await svc.running.services.tools!.sandbox!.identity.liveGrants('cal@shop.example')).toBe(0);
    await expect(client.listTools()).rejects.toThrow(/404|No MCP server/);
  });
});
