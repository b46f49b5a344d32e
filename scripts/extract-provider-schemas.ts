/*
 * Writes test/fixtures/provider-schemas.json: the parts of the providers'
 * published definitions that describe what the sandboxes return, as JSON
 * Schema (draft-07, `definitions`), for test/tools/provider-schemas.test.ts:
 *
 * - meta: Meta's OpenAPI description of the WhatsApp Cloud API
 *   (github.com/facebook/openapi, business-messaging-api_vNN.yaml): the answers of
 *   POST /{Phone-Number-ID}/messages, GET /{Media-ID}, GET and POST
 *   /{WABA-ID}/message_templates, GET /{Phone-Number-ID} and
 *   GET /{WABA-ID}/phone_numbers, and the GraphAPIError envelope;
 * - gmail, calendar: Google's discovery documents for Gmail v1 and Calendar v3
 *   (their `schemas`, `$ref` by name rewritten to JSON pointers; discovery
 *   types and formats kept: int64 and uint64 are strings there);
 * - stripe: Stripe's OpenAPI spec (github.com/stripe/openapi, openapi/spec3.yaml)
 *   for checkout.session, payment_intent, webhook_endpoint, account, event,
 *   refund and error, with every schema they reach; another resource they
 *   reach (a customer, an invoice: only through an expandable field,
 *   `anyOf [id, object]`) is left as "an object" (the sandboxes never expand
 *   them), to keep the fixture small.
 *
 *   npx tsx scripts/extract-provider-schemas.ts <meta.yaml> <gmail-v1.json> <calendar-v3.json> <stripe-spec3.yaml|json> '<source notes as JSON>'
 *
 * The YAML parser is js-yaml (a devDependency).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the parsed definitions are walked by key, untyped
type Json = Record<string, any>;
const [metaFile, gmailFile, calendarFile, stripeFile, notes = '{}'] = process.argv.slice(2);
if (!metaFile || !gmailFile || !calendarFile || !stripeFile) {
  console.error('usage: extract-provider-schemas.ts <meta.yaml> <gmail-v1.json> <calendar-v3.json> <stripe-spec3.yaml|json> [notes JSON]');
  process.exit(2);
}
const yaml = createRequire(import.meta.url)('js-yaml') as { load(text: string): unknown };
const load = (f: string) => (f.endsWith('.json') ? JSON.parse(readFileSync(f, 'utf8')) : yaml.load(readFileSync(f, 'utf8'))) as Json;

/** Rewrites every `$ref` with `rename` and collects the names it points at. */
function rewriteRefs(node: unknown, rename: (ref: string) => string, seen: Set<string>): unknown {
  if (Array.isArray(node)) return node.map((n) => rewriteRefs(n, rename, seen));
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === '$ref' && typeof v === 'string') {
      const name = rename(v);
      seen.add(name);
      out.$ref = `#/definitions/${name}`;
    } else if (k === 'example' || k === 'examples' || k === 'description' || k === 'enumDescriptions' || k.startsWith('x-')) {
      continue;
    } else out[k] = rewriteRefs(v, rename, seen);
  }
  return out;
}

/** The named schemas `roots` reach in `all`, refs rewritten; `keep(name, depth)` false leaves a schema as "an object". */
function closure(all: Json, roots: string[], rename: (ref: string) => string, keep: (name: string, depth: number) => boolean): Json {
  const defs: Json = {};
  let frontier: (readonly [string, number])[] = roots.map((n) => [n, 0] as const);
  while (frontier.length > 0) {
    const next: (readonly [string, number])[] = [];
    for (const [name, depth] of frontier) {
      if (name in defs) continue;
      if (!(name in all)) throw new Error(`no schema ${name}`);
      if (!keep(name, depth)) {
        defs[name] = { type: 'object', description: 'not copied (only reached through expandable fields)' };
        continue;
      }
      const seen = new Set<string>();
      defs[name] = rewriteRefs(all[name], rename, seen);
      for (const s of seen) next.push([s, depth + 1]);
    }
    frontier = next;
  }
  return defs;
}

// ------------------------------------------------------------------ Meta
const meta = load(metaFile);
const metaSchemas = meta.components.schemas as Json;
const ok = (path: string, method: string) => meta.paths[path][method].responses['200'].content['application/json'].schema as Json;
const metaRoots: Json = {
  SendMessageResponse: ok('/{Version}/{Phone-Number-ID}/messages', 'post'),
  MediaInfo: ok('/{Version}/{Media-ID}', 'get'),
  MessageTemplates: ok('/{Version}/{WABA-ID}/message_templates', 'get'),
  MessageTemplateCreated: ok('/{Version}/{WABA-ID}/message_templates', 'post'),
  PhoneNumber: ok('/{Version}/{Phone-Number-ID}', 'get'),
  PhoneNumbers: ok('/{Version}/{WABA-ID}/phone_numbers', 'get'),
  GraphAPIError: { $ref: '#/components/schemas/GraphAPIError' },
};
const metaRename = (ref: string) => ref.replace('#/components/schemas/', '');
const metaSeen = new Set<string>();
const metaDefs: Json = {};
for (const [name, schema] of Object.entries(metaRoots)) metaDefs[name] = rewriteRefs(schema, metaRename, metaSeen);
Object.assign(metaDefs, closure(metaSchemas, [...metaSeen], metaRename, () => true));

// ------------------------------------------------------------------ Google
function discovery(file: string, roots: string[]) {
  const doc = load(file);
  const defs = closure(doc.schemas, roots, (ref) => ref, () => true);
  for (const d of Object.values(defs) as Json[]) delete d.id;
  // Discovery's `any` is JSON Schema's "no type".
  const untype = (n: unknown): void => {
    if (n === null || typeof n !== 'object') return;
    if ((n as Json).type === 'any') delete (n as Json).type;
    Object.values(n).forEach(untype);
  };
  untype(defs);
  return { revision: doc.revision as string, version: doc.version as string, definitions: defs };
}
const gmail = discovery(gmailFile, ['Message', 'MessagePart', 'MessagePartBody', 'MessagePartHeader', 'Thread', 'ListMessagesResponse', 'ListThreadsResponse', 'Profile', 'Label', 'ListLabelsResponse', 'Draft']);
const calendar = discovery(calendarFile, ['Event', 'Events', 'CalendarListEntry', 'CalendarList', 'FreeBusyResponse', 'Calendar']);

// ------------------------------------------------------------------ Stripe
const stripe = load(stripeFile);
const stripeRoots = ['checkout.session', 'payment_intent', 'webhook_endpoint', 'account', 'event', 'refund', 'error'];
// The roots and every non-resource schema they reach are copied whole; another resource (a customer,
// an invoice…) is reached only through an expandable field, which the sandboxes answer with an id.
const stripeDefs = closure(stripe.components.schemas, stripeRoots, (ref) => ref.replace('#/components/schemas/', ''), (name, depth) => depth === 0 || stripeRoots.includes(name) || !(stripe.components.schemas[name] as Json)['x-resourceId']);

/** OpenAPI 3.0's `nullable` as JSON Schema says it: `null` among the types, or beside the alternatives. */
function nullableToJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(nullableToJsonSchema);
  if (node === null || typeof node !== 'object') return node;
  const { nullable, ...rest } = node as Json;
  const out: Json = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, k === 'enum' ? v : nullableToJsonSchema(v)]));
  if (nullable !== true) return out;
  if (typeof out.type === 'string') return { ...out, type: [out.type, 'null'], ...(out.enum ? { enum: [...(out.enum as unknown[]), null] } : {}) };
  return { anyOf: [out, { type: 'null' }] };
}
for (const [name, schema] of Object.entries(stripeDefs)) stripeDefs[name] = nullableToJsonSchema(schema);

const out = {
  source: JSON.parse(notes) as unknown,
  meta: { version: meta.info?.version as string, definitions: metaDefs },
  gmail,
  calendar,
  stripe: { version: stripe.info?.version as string, definitions: stripeDefs },
};
const target = join(import.meta.dirname, '..', 'test', 'fixtures', 'provider-schemas.json');
writeFileSync(target, JSON.stringify(out, null, 1) + '\n');
console.log(`wrote ${target}: meta ${Object.keys(metaDefs).length}, gmail ${Object.keys(gmail.definitions).length}, calendar ${Object.keys(calendar.definitions).length}, stripe ${Object.keys(stripeDefs).length} schemas`);
