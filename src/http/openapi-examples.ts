/**
 * Example values for the OpenAPI document, made from the same JSON Schemas
 * that validate: a schema's own `examples` (from zod `.meta({ examples })`),
 * `example`, `const` or `default` first, otherwise a plausible value built
 * from its type, format and bounds. Every operation gets a request and a
 * response example this way, and they cannot drift from the schemas.
 */

type Schema = Record<string, unknown>;

const STRING_FORMATS: Record<string, string> = {
  'date-time': '2026-01-05T09:30:00.000Z',
  date: '2026-01-05',
  email: 'ann@example.com',
  uri: 'https://example.com/hooks/switchboard',
  url: 'https://example.com/hooks/switchboard',
  uuid: '3f2b8c1e-9a4d-4c7e-b1f0-2d6e8a9c4b10',
};

/** Values of this API's usual shapes, tried in order against a schema's `pattern`. */
const PATTERN_CANDIDATES = [
  '4915112345678',
  '+4915112345678',
  '106540352242922',
  '4915112345678:106540352242922',
  'order_update',
  'en_US',
  'T-260105-000001',
  'org_3Jx9kQ2mVbT7wLpR8sYfN4hD6gZcA1eU5iO0nM2',
  'example',
];

/** Hints by property name, for ids and the like whose schema says only "string". */
function stringFor(name: string | undefined, s: Schema): string {
  const fmt = typeof s.format === 'string' ? STRING_FORMATS[s.format] : undefined;
  if (fmt !== undefined) return fmt;
  if (typeof s.pattern === 'string') {
    let re: RegExp | undefined;
    try {
      re = new RegExp(s.pattern, 'u');
    } catch {
      re = undefined;
    }
    const hit = re && PATTERN_CANDIDATES.find((c) => re.test(c));
    if (hit !== undefined) return hit;
  }
  const n = (name ?? '').toLowerCase();
  let v: string;
  if (n === 'ticketid') v = 'T-260105-000001';
  else if (n === 'audienceexternalid') v = '4915112345678:106540352242922';
  else if (n.endsWith('at') || n.endsWith('date')) v = STRING_FORMATS['date-time']!;
  else if (n === 'email') v = STRING_FORMATS.email!;
  else if (n === 'url' || n.endsWith('url')) v = STRING_FORMATS.url!;
  else if (n === 'id' || n.endsWith('id')) v = '3f2b8c1e-9a4d-4c7e-b1f0-2d6e8a9c4b10';
  else if (n === 'name') v = 'Ann';
  else v = 'string';
  const min = typeof s.minLength === 'number' ? s.minLength : 0;
  const max = typeof s.maxLength === 'number' ? s.maxLength : Infinity;
  if (v.length < min) v = v.padEnd(min, 'x');
  if (v.length > max) v = v.slice(0, max);
  return v;
}

function numberFor(s: Schema, integer: boolean): number {
  const min = typeof s.minimum === 'number' ? s.minimum : typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + 1 : undefined;
  const max = typeof s.maximum === 'number' ? s.maximum : undefined;
  let v = min ?? 1;
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
      return numberFor(s, true);
    case 'number':
      return numberFor(s, false);
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
 * Gives every JSON request body and response of an OpenAPI document an
 * `example` (unless it has one), built from its schema.
 */
export function addExamples(doc: { paths: Record<string, Record<string, unknown>>; components?: unknown }): void {
  const media = (content: unknown): MediaObject | undefined => (content as Record<string, MediaObject> | undefined)?.['application/json'];
  const fill = (m: MediaObject | undefined) => {
    if (m === undefined || m.schema === undefined || m.example !== undefined) return;
    const root = { components: doc.components, $defs: (m.schema as Schema).$defs };
    m.example = exampleOf(m.schema, root);
  };
  for (const ops of Object.values(doc.paths)) {
    for (const op of Object.values(ops) as { requestBody?: { content?: unknown }; responses?: Record<string, { content?: unknown }> }[]) {
      fill(media(op.requestBody?.content));
      for (const r of Object.values(op.responses ?? {})) fill(media(r.content));
    }
  }
}
