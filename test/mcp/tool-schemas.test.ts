import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { startTestService, type TestOrg, type TestService } from '../harness/service.js';
import { call, errorText, mcpClient } from './helpers.js';

/*
 * The portability rules the MCP Inspector's strict mode checks (`inspector --cli <url> --method
 * tools/list --strict`: 0 warnings, see docs/mcp.md), and the schema rules a model relies on, checked
 * over the live tools/list.
 */

type Json = Record<string, unknown>;

/** Every subschema with its path. */
function* subschemas(s: unknown, path: string): Generator<[string, Json]> {
  if (typeof s !== 'object' || s === null || Array.isArray(s)) return;
  const node = s as Json;
  yield [path, node];
  for (const [k, v] of Object.entries(node.properties ?? {})) yield* subschemas(v, `${path}.${k}`);
  for (const key of ['items', 'additionalProperties', 'not']) yield* subschemas(node[key], `${path}[${key}]`);
  for (const key of ['anyOf', 'oneOf', 'allOf']) for (const [i, b] of ((node[key] as unknown[]) ?? []).entries()) yield* subschemas(b, `${path}.${key}[${i}]`);
}

describe('platform tool schemas', () => {
  let svc: TestService;
  let org: TestOrg;
  let client: Client;
  let tools: Map<string, Tool>;
  beforeAll(async () => {
    svc = await startTestService();
    org = await svc.createOrg('Schemas');
    client = await mcpClient(`${svc.url}/mcp/platform`, org.adminKey);
    tools = new Map((await client.listTools()).tools.map((t) => [t.name, t]));
  });
  afterAll(async () => {
    await client?.close();
    await svc?.close();
  });

  const all = () => [...tools.values()].flatMap((t) => [...subschemas(t.inputSchema, `${t.name}.input`), ...subschemas(t.outputSchema, `${t.name}.output`)]);

  it('are portable: one type per schema (nullable as anyOf), no schema that accepts anything, date-times by format without a pattern', () => {
    for (const [path, s] of all()) {
      expect(Array.isArray(s.type), `${path}: type ${JSON.stringify(s.type)}`).toBe(false);
      if (s.format === 'date-time') expect(s.pattern, path).toBeUndefined();
      if (typeof s.pattern === 'string') expect(s.pattern.length, `${path}: a ${s.pattern.length}-character pattern`).toBeLessThan(100);
      if (path.endsWith('[additionalProperties]')) expect(Object.keys(s).length, `${path}: an empty schema`).toBeGreaterThan(0);
    }
    const resolution = (tools.get('update_ticket')!.inputSchema.properties as Json).resolutionDate as Json;
    expect(resolution.anyOf).toEqual([expect.objectContaining({ type: 'string', format: 'date-time' }), { type: 'null' }]);
  });

  it('describe every input field, at every depth', () => {
    for (const t of tools.values()) {
      for (const [path, s] of subschemas(t.inputSchema, t.name)) {
        for (const [name, p] of Object.entries((s.properties as Record<string, Json>) ?? {})) expect(p.description, `${path}.${name}`).toEqual(expect.any(String));
      }
    }
  });

  it('send_media_message: media is a oneOf keyed on its type, each a link (format uri) or a mediaId', () => {
    const media = (tools.get('send_media_message')!.inputSchema.properties as Json).media as Json;
    const branches = media.oneOf as Json[];
    expect(branches.map((b) => ((b.properties as Json).type as Json).const)).toEqual(['image', 'video', 'audio', 'document', 'sticker']);
    for (const b of branches) {
      const kind = ((b.properties as Json).type as Json).const as string;
      const source = ((b.properties as Json)[kind] as Json).oneOf as Json[];
      expect(source.map((x) => x.required)).toEqual([['link'], ['mediaId']]);
      expect(((source[0]!.properties as Json).link as Json).format).toBe('uri');
      expect(Object.keys(source[0]!.properties as Json).includes('filename')).toBe(kind === 'document');
    }
  });

  it('say "exactly one of" in the schema: channelId + to or audienceExternalId; sessionId or audienceExternalId', () => {
    for (const name of ['send_text_message', 'send_buttons_message', 'send_media_message', 'send_location_message', 'send_contacts_message', 'send_reaction', 'send_template_message']) {
      const oneOf = tools.get(name)!.inputSchema.oneOf as Json[];
      expect(oneOf.map((b) => b.required), name).toEqual([['channelId', 'to'], ['audienceExternalId']]);
    }
    expect((tools.get('get_conversation_history')!.inputSchema.oneOf as Json[]).map((b) => b.required)).toEqual([['sessionId'], ['audienceExternalId']]);
  });

  it('still refuse what the schema refuses, and error texts never say a sentence twice', async () => {
    const texts: string[] = [];
    const refused = async (name: string, args: Record<string, unknown>) => {
      const r = await call(client, name, args);
      expect(r.isError, name).toBe(true);
      texts.push(errorText(r));
    };
    await refused('send_media_message', { audienceExternalId: '4915100000000:1', media: { type: 'image', image: { link: 'https://example.com/a.png', mediaId: 'm1' } } });
    await refused('send_media_message', { audienceExternalId: '4915100000000:1', media: { type: 'audio', audio: { link: 'https://example.com/a.ogg', caption: 'no' } } });
    await refused('send_text_message', { channelId: 'ch_x', to: '4915100000000', audienceExternalId: '4915100000000:1', text: { body: 'hi' } });
    await refused('send_buttons_message', { audienceExternalId: '4915100000000:1', interactive: { body: { text: 'x' }, buttons: [{ id: 'a', title: 'A' }, { id: 'a', title: 'B' }] } });
    await refused('get_conversation_history', {});
    await refused('get_ticket', { ticketId: 'T-000000-000009' });
    await refused('update_ticket', { ticketId: 'T-000000-000009', resolutionDate: 'yesterday' });
    for (const text of texts) {
      const sentences = text.split(/(?<=[.!?])\s+/).map((x) => x.trim().toLowerCase()).filter(Boolean);
      expect(new Set(sentences).size, text).toBe(sentences.length);
    }
  });
});
