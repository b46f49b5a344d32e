/**
 * Example values for the OpenAPI document. A route's own request `example`
 * (defineRoute) comes first; the rest are made from the same JSON Schemas
 * that validate: a schema's own `examples` (from zod `.meta({ examples })`),
 * `example`, `const` or `default`, otherwise a value a reader would expect
 * for the property's name (BY_NAME, EXAMPLE_IDS) within its type, format
 * and bounds. An error response shows its status's code, or the one its
 * description names. Tests hold every example to its schema
 * (openapi-examples.test.ts) and every POST example to a 2xx from a fresh
 * demo organization (openapi-try-it.test.ts).
 */

type Schema = Record<string, unknown>;

/**
 * The identifiers every example uses, one per kind, so that examples agree
 * with each other (the channel a send names is the channel a path names).
 * They are placeholders for a reader's own: the try-it test swaps them for
 * a fresh demo organization's, as a reader pastes theirs.
 */
export const EXAMPLE_IDS = {
  organizationId: '6f1c2b7e-4d3a-4b8e-9a1f-0c2d3e4f5a6b',
  userId: '2a7d9c4e-8b1f-4e3a-a6c5-3d2e1f0b9a87',
  channelId: 'ch_Q8wLr3VnT5kZx2Hb',
  phoneNumberId: '106540352242922',
  businessAccountId: '102290129340398',
  customerPhone: '4915112345678',
  /** The customer on the channel: `<customerPhone>:<phoneNumberId>`. */
  audienceExternalId: '4915112345678:106540352242922',
  ticketId: 'T-260105-000001',
  /** A message the customer received: the reply-buttons example's. */
  messageId: 'wamid.HBgNNDkxNTExMjM0NTY3OBUCABEYEjQyQzE3QjRGMjU4RDlBMEU3AA==',
  /** The template example's message, with its quick-reply buttons. */
  templateMessageId: 'wamid.HBgNNDkxNTExMjM0NTY3OBUCABEYEjhGMzA5QjJDNEUxQTdENTZCAA==',
  other: '3f2b8c1e-9a4d-4c7e-b1f0-2d6e8a9c4b10',
} as const;

/**
 * The sandbox's `order_update` template ("Hi {{1}}, your order {{2}} has
 * shipped and arrives on {{3}}.") with its three variables: what every
 * template send example sends.
 */
export const ORDER_UPDATE_TEMPLATE = {
  name: 'order_update',
  language: { code: 'en_US', policy: 'deterministic' as const },
  components: [
    {
      type: 'body' as const,
      parameters: [
        { type: 'text' as const, text: 'Ann' },
        { type: 'text' as const, text: '#1042' },
        { type: 'text' as const, text: 'Thursday, 8 January' },
      ],
    },
  ],
};

const STRING_FORMATS: Record<string, string> = {
  'date-time': '2026-01-05T09:30:00.000Z',
  date: '2026-01-05',
  email: 'ann@example.com',
  uri: 'https://example.com/hooks/switchboard',
  url: 'https://example.com/hooks/switchboard',
  uuid: EXAMPLE_IDS.other,
};

/** Values of this API's usual shapes, tried in order against a schema's `pattern`. */
const PATTERN_CANDIDATES = [
  EXAMPLE_IDS.customerPhone,
  '+' + EXAMPLE_IDS.customerPhone,
  EXAMPLE_IDS.phoneNumberId,
  EXAMPLE_IDS.audienceExternalId,
  'order_update',
  'en_US',
  'USD',
  EXAMPLE_IDS.ticketId,
  'org_3Jx9kQ2mVbT7wLpR8sYfN4hD6gZcA1eU5iO0nM2',
  'example',
];

/**
 * Values by property name, for what a schema says only "string" about:
 * what a reader would expect in that field, not a word about its type.
 */
const BY_NAME: Record<string, string> = {
  ticketid: EXAMPLE_IDS.ticketId,
  audienceexternalid: EXAMPLE_IDS.audienceExternalId,
  conversationid: EXAMPLE_IDS.audienceExternalId,
  channelid: EXAMPLE_IDS.channelId,
  organizationid: EXAMPLE_IDS.organizationId,
  orgid: EXAMPLE_IDS.organizationId,
  userid: EXAMPLE_IDS.userId,
  assigneeid: EXAMPLE_IDS.userId,
  agentid: EXAMPLE_IDS.userId,
  phonenumberid: EXAMPLE_IDS.phoneNumberId,
  businessaccountid: EXAMPLE_IDS.businessAccountId,
  messageid: EXAMPLE_IDS.messageId,
  wamid: EXAMPLE_IDS.messageId,
  sessionid: EXAMPLE_IDS.other,
  phone: EXAMPLE_IDS.customerPhone,
  to: EXAMPLE_IDS.customerPhone,
  from: EXAMPLE_IDS.customerPhone,
  phone_number: '+' + EXAMPLE_IDS.customerPhone,
  displayphonenumber: '15550104477',
  name: 'Ann Example',
  contactname: 'Ann Example',
  profilename: 'Ann Example',
  keyname: 'CRM sync',
  username: 'Ann Agent',
  shortcode: 'thanks',
  subject: 'Order #1042 arrived damaged',
  title: 'Order #1042 arrived damaged',
  description: 'The parcel arrived with a torn box and a cracked lid; the customer asks for a replacement.',
  text: 'Hi Ann, your order #1042 has shipped.',
  body: 'Hi Ann, your order #1042 has shipped.',
  caption: 'Your invoice for order #1042',
  filename: 'invoice-1042.pdf',
  link: 'https://example.com/files/invoice-1042.pdf',
  footer: 'Reply STOP to opt out',
  header: 'Order update',
  message: 'Delivered to the customer',
  error: 'connection refused',
  status: 'sent',
  status_reason: 'delivered',
  type: 'text',
  language: 'en_US',
  category: 'UTILITY',
  prefix: 'org_3Jx9kQ2m',
  key: 'org_3Jx9kQ2mVbT7wLpR8sYfN4hD6gZcA1eU5iO0nM2',
  token: 'sb_inbox_4kV2pQ8mZt7xR1nB6cY3',
  csrftoken: 'b1X9qL4tN7vR2mK8pZ5c',
  secret: 'whsec_MfKQ9r8GKYqrTZ7dY5b2x4v1',
  verifytoken: 'verify-7Hq2Lm9Xp4',
  accesstoken: 'EAAJB4x9Zk2qLm7Pt3Vn',
  appsecret: '5f2c8e1a9b7d4c6e',
  password: 'a long password',
  currentpassword: 'the password you sign in with now',
  newpassword: 'a new long password',
  eventtype: 'message_status',
  events: 'message_status',
  scopes: 'tickets:read',
  origin: 'https://app.example.com',
  origins: 'https://app.example.com',
  allowedorigins: 'https://shop.example.com',
  replyto: 'support@example.com',
  account: 'support@example.com',
  reference: 'topup-2026-01-05',
  disabledreason: 'the endpoint answered HTTP 410 Gone',
  payload: 'TRACK_ORDER',
  parameter_name: 'customer_name',
  otp_type: 'COPY_CODE',
  example: 'Ann',
  configured: 'sandbox',
  timestamp: '1767605400',
  retryuntil: '2026-01-08T09:30:00.000Z',
  nextcursor: 'eyJzIjoiW1wiYWxsXCIsXCJhY3Rpdml0eVwiXSIsImsiOiIyMDI2LTAxLTA1VDA5OjMwOjAwLjAwMFoifQ',
  snippet: '…the parcel arrived with a torn box and a cracked lid…',
  visitorid: 'v_0f3a9c2e7b1d4a6c8e5f2b90',
  identitysecret: 'wcs_7Yp2Qm9Lx4Rt8Vb3Nc6Hd1Kf5Jg0Ws2Ze7Ua4Io9',
  clientid: 'c-1767605400-1',
  after: 'webchat.in.4f1c9e2b7a3d8c6e0b5a9f2d7c1e8a4b',
  color: '#0b6bcb',
  greeting: 'Hi! How can we help?',
};

/** Hints by property name, for ids and the like whose schema says only "string". */
function stringFor(name: string | undefined, s: Schema): string {
  const fmt = typeof s.format === 'string' ? STRING_FORMATS[s.format] : undefined;
  if (fmt !== undefined) return fmt;
  let re: RegExp | undefined;
  if (typeof s.pattern === 'string') {
    try {
      re = new RegExp(s.pattern, 'u');
    } catch {
      re = undefined;
    }
  }
  const n = (name ?? '').toLowerCase();
  const named = BY_NAME[n];
  let v: string;
  if (named !== undefined && (re === undefined || re.test(named))) v = named;
  else if (re !== undefined && PATTERN_CANDIDATES.some((c) => re.test(c))) return PATTERN_CANDIDATES.find((c) => re.test(c))!;
  else if (n.endsWith('at') || n.endsWith('date') || n.endsWith('until')) v = STRING_FORMATS['date-time']!;
  else if (n === 'email' || n.endsWith('email')) v = STRING_FORMATS.email!;
  else if (n === 'url' || n.endsWith('url')) v = STRING_FORMATS.url!;
  else if (n === 'id' || n.endsWith('id')) v = EXAMPLE_IDS.other;
  else v = `${name ?? 'value'} example`.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  const min = typeof s.minLength === 'number' ? s.minLength : 0;
  const max = typeof s.maxLength === 'number' ? s.maxLength : Infinity;
  if (v.length < min) v = v.padEnd(min, '0');
  if (v.length > max) v = v.slice(0, max);
  return v;
}

/** Counts and amounts by property name; anything else is 1. */
const NUMBER_BY_NAME: Record<string, number> = {
  total: 42,
  page: 1,
  totalpages: 3,
  limit: 20,
  balance: 990,
  amount: 100,
  amount_1000: 12500,
  price: 10,
  messagespersecond: 80,
  attemptcount: 1,
  attempts: 1,
  synced: 6,
  removed: 0,
  sessionsended: 1,
  unreadcount: 2,
  code: 131047,
  status: 200,
  index: 0,
  seq: 17,
  size: 48213,
  bytes: 48213,
  expiresin: 3600,
};

function numberFor(name: string | undefined, s: Schema, integer: boolean): number {
  const min = typeof s.minimum === 'number' ? s.minimum : typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + (integer ? 1 : 0.01) : undefined;
  const max = typeof s.maximum === 'number' ? s.maximum : typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum - (integer ? 1 : 0.01) : undefined;
  let v = NUMBER_BY_NAME[(name ?? '').toLowerCase()] ?? 1;
  if (min !== undefined && v < min) v = min;
  if (max !== undefined && v > max) v = max;
  return integer ? Math.ceil(v) : v;
}

/** An example value for `schema`; `$ref`s resolve against `root` (its `$defs` or `components.schemas`). */
export function exampleOf(schema: unknown, root: unknown = schema, name?: string, depth = 0): unknown {
  if (schema === null || typeof schema !== 'object' || depth > 12) return null;
  const s = schema as Schema;
  if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0];
  if ('example' in s) return s.example;
  if ('const' in s) return s.const;
  if ('default' in s) return s.default;
  if (typeof s.$ref === 'string') return exampleOf(resolveRef(s.$ref, root), root, name, depth + 1);
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = s[key];
    if (Array.isArray(options) && options.length > 0) {
      const first = options.find((o) => (o as Schema)?.type !== 'null') ?? options[0];
      return exampleOf(first, root, name, depth + 1);
    }
  }
  if (Array.isArray(s.allOf)) {
    const parts = s.allOf.map((p) => exampleOf(p, root, name, depth + 1));
    if (parts.every((p) => p !== null && typeof p === 'object' && !Array.isArray(p))) return Object.assign({}, ...parts);
    return parts[0] ?? null;
  }
  const type = Array.isArray(s.type) ? (s.type.find((t) => t !== 'null') ?? s.type[0]) : s.type;
  switch (type) {
    case 'object':
    case undefined: {
      const props = s.properties as Record<string, unknown> | undefined;
      if (props === undefined) return type === 'object' ? {} : null;
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(props)) out[k] = exampleOf(v, root, k, depth + 1);
      return out;
    }
    case 'array': {
      const min = typeof s.minItems === 'number' ? s.minItems : 0;
      if (s.items === undefined) return [];
      const item = exampleOf(s.items, root, name, depth + 1);
      return Array.from({ length: Math.max(1, min) }, () => item);
    }
    case 'string':
      return stringFor(name, s);
    case 'integer':
      return numberFor(name, s, true);
    case 'number':
      return numberFor(name, s, false);
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return null;
  }
}

function resolveRef(ref: string, root: unknown): unknown {
  if (!ref.startsWith('#/')) return null;
  let node: unknown = root;
  for (const part of ref.slice(2).split('/')) {
    if (node === null || typeof node !== 'object') return null;
    node = (node as Record<string, unknown>)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node;
}

interface MediaObject {
  schema?: unknown;
  example?: unknown;
}

/**
 * The code of a refusal whose description names none, for the statuses that
 * have one usual code. A 409 or 422 has many: its description leads with its
 * own (`webhook_url_taken: ...`), which the examples test holds every route to.
 */
const ERROR_CODES: Record<string, string> = {
  '400': 'validation_failed',
  '401': 'unauthorized',
  '402': 'insufficient_credits',
  '403': 'insufficient_scope',
  '404': 'not_found',
  '413': 'payload_too_large',
  '415': 'unsupported_media_type',
  '429': 'rate_limited',
  '500': 'internal_error',
  '502': 'network_rejected',
  '503': 'storage_unavailable',
};

/**
 * An error body for a documented refusal: the first `code` its description
 * names in backticks (so "`csrf_failed`: ..." shows csrf_failed), else the
 * status's usual one, and the description as the message. A validation
 * refusal names `missing`, a required field of the request, when there is one.
 */
export function errorExample(status: string, description: string, missing?: string): unknown {
  // A code leads the description (`rate_limited: ...`) or stands in backticks; plain words are not codes.
  const leading = /^`?([a-z]+_[a-z0-9_]+)`?:\s*(.*)$/s.exec(description);
  const named = leading?.[1] ?? /`([a-z]+_[a-z0-9_]+)`/.exec(description)?.[1];
  if (status === '400' && named === undefined && missing !== undefined) {
    const message = `${missing} is required`;
    return { success: false, error: { code: 'validation_failed', message, details: [{ field: `body.${missing}`, message, code: 'invalid_type' }] } };
  }
  const message = (leading?.[2] || description).replace(/`/g, '');
  return { success: false, error: { code: named ?? ERROR_CODES[status] ?? 'unnamed_error', message } };
}

/**
 * Gives every JSON request body and response of an OpenAPI document an
 * `example` (unless it has one), built from its schema, error responses one
 * for their status, and every path parameter the example id of its kind.
 */
export function addExamples(doc: { paths: Record<string, Record<string, unknown>>; components?: unknown }): void {
  const errorSchema = JSON.stringify((doc.components as { schemas?: { Error?: unknown } } | undefined)?.schemas?.Error);
  const isError = (schema: unknown) => (schema as Schema | undefined)?.$ref === '#/components/schemas/Error' || JSON.stringify(schema) === errorSchema;
  const media = (content: unknown): MediaObject | undefined => (content as Record<string, MediaObject> | undefined)?.['application/json'];
  const fill = (m: MediaObject | undefined, error?: { status: string; description: string; missing: string | undefined }) => {
    if (m === undefined || m.schema === undefined || m.example !== undefined) return;
    if (error && isError(m.schema)) {
      m.example = errorExample(error.status, error.description, error.missing);
      return;
    }
    const root = { components: doc.components, $defs: (m.schema as Schema).$defs };
    m.example = exampleOf(m.schema, root);
  };
  type Op = { parameters?: { in: string; name: string; schema?: unknown; example?: unknown }[]; requestBody?: { content?: unknown }; responses?: Record<string, { description?: string; content?: unknown }> };
  for (const ops of Object.values(doc.paths)) {
    for (const op of Object.values(ops) as Op[]) {
      for (const p of op.parameters ?? []) if (p.example === undefined && p.in === 'path') p.example = exampleOf(p.schema, p.schema, p.name);
      const body = media(op.requestBody?.content);
      fill(body);
      const missing = ((body?.schema as Schema | undefined)?.required as string[] | undefined)?.[0];
      for (const [status, r] of Object.entries(op.responses ?? {})) fill(media(r.content), { status, description: r.description ?? '', missing });
    }
  }
}
