import { z } from 'zod';
import { clientCommandSchema, MAX_FRAME_BYTES, serverFrameSchemas } from './protocol.js';
import { INBOX_PATH } from './server.js';

const jsonSchema = (s: z.ZodType) => z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' });

/**
 * The inbox protocol as an AsyncAPI 3.0 document (`/asyncapi.json`), built
 * from the zod schemas that validate the frames.
 */
export function buildAsyncApi(opts: { version: string; serverUrl?: string | undefined }): Record<string, unknown> {
  const url = new URL(opts.serverUrl ?? 'http://localhost:3000');
  const messages: Record<string, unknown> = {};
  const received: string[] = [];
  const sent: string[] = [];
  for (const option of clientCommandSchema.options) {
    const name = option.shape.type.value;
    messages[name] = { name, title: name, summary: option.description, contentType: 'application/json', payload: jsonSchema(option) };
    sent.push(name);
  }
  for (const [name, schema] of Object.entries(serverFrameSchemas)) {
    const key = name === 'ack' || name === 'error' || name === 'presence' || name === 'typing' ? `server_${name}` : name;
    messages[key] = { name: key, title: name, summary: schema.description, contentType: 'application/json', payload: jsonSchema(schema) };
    received.push(key);
  }
  const ref = (names: string[]) => names.map((n) => ({ $ref: `#/channels/inbox/messages/${n}` }));
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Switchboard live inbox',
      version: opts.version,
      description:
        `Agents and bots watch and work the organization's conversations over one WebSocket. Authenticate the upgrade with an API key (Authorization: Bearer, scopes inbox:read / inbox:write), ` +
        `an inbox token (?token= from POST /v1/inbox/token) or the dashboard session cookie. Add ?since=<seq> to resume after a reconnect. Frames are JSON text, at most ${MAX_FRAME_BYTES} bytes. ` +
        'Every command carries a client-chosen id and is answered by an ack or an error with that commandId. Close codes: 1012 the node is stopping (reconnect with since), ' +
        '1013 the client read too slowly (reconnect with since), 1008 too many refused frames, ' +
        '4001 the session or API key of the socket ended (sign-out, password change or reset, revoked key, deactivated user: do not reconnect with it; a command sent after it is answered credentials_revoked), ' +
        "4003 the user's role or the key's scopes changed (reconnect to carry on with what they allow now; a command sent after it is answered access_changed).",
    },
    servers: {
      switchboard: { host: url.host, protocol: url.protocol === 'https:' ? 'wss' : 'ws', pathname: INBOX_PATH, description: 'the REST listener; upgrades at /ws' },
    },
    channels: {
      inbox: {
        address: INBOX_PATH,
        title: 'The live inbox',
        messages: Object.fromEntries(Object.keys(messages).map((n) => [n, { $ref: `#/components/messages/${n}` }])),
        bindings: {
          ws: {
            query: {
              type: 'object',
              properties: {
                since: { type: 'integer', minimum: 0, description: 'the last seq received: the events after it are replayed first' },
                token: { type: 'string', description: 'a single-use inbox token from POST /v1/inbox/token' },
              },
            },
          },
        },
      },
    },
    operations: {
      // Described from the service's side: it sends frames and receives commands.
      sendFrames: { action: 'send', channel: { $ref: '#/channels/inbox' }, summary: 'events, acks, errors, presence and typing, to the client', messages: ref(received) },
      receiveCommands: { action: 'receive', channel: { $ref: '#/channels/inbox' }, summary: 'commands from the client', messages: ref(sent) },
    },
    components: { messages },
  };
}
