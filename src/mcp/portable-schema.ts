/*
 * Tool schemas as clients can use them. zod's JSON Schema is correct but
 * spells some things in ways that model providers' schema dialects (a single
 * `type` per schema, no bare `{}`) reject or silently drop; the MCP Inspector
 * in strict mode reports each. This rewrites them, keeping the contract:
 *
 * - `type: ["string", "null"]` becomes `anyOf: [{type: "string", …}, {type: "null"}]`,
 *   the description staying on the outside;
 * - `format: "date-time"` drops zod's 400-character `pattern`: the format says it;
 * - `additionalProperties: {}` (an open object) becomes `additionalProperties: true`.
 *
 * Pure: a new object, the input untouched.
 */

type Json = Record<string, unknown>;

/** Keywords that describe a schema rather than constrain it: they stay outside a nullable's `anyOf`. */
const ANNOTATIONS = new Set(['description', 'title', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly']);

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export function portableSchema(schema: Json): Json {
  return rewrite(schema) as Json;
}

function rewrite(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rewrite);
  if (!isObject(node)) return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'properties' || k === '$defs' || k === 'definitions' || k === 'patternProperties') {
      out[k] = isObject(v) ? Object.fromEntries(Object.entries(v).map(([name, s]) => [name, rewrite(s)])) : v;
    } else if (k === 'additionalProperties' && isObject(v) && Object.keys(v).length === 0) {
      out[k] = true;
    } else if (k === 'enum' || k === 'const' || k === 'required' || k === 'examples' || k === 'default') {
      out[k] = v;
    } else {
      out[k] = rewrite(v);
    }
  }
  if (out.format === 'date-time' && typeof out.pattern === 'string') delete out.pattern;
  if (Array.isArray(out.type) && out.type.includes('null') && out.type.length > 1) {
    const others = out.type.filter((t) => t !== 'null');
    const outer: Json = {};
    const inner: Json = {};
    for (const [k, v] of Object.entries(out)) {
      if (k === 'type') continue;
      (ANNOTATIONS.has(k) ? outer : inner)[k] = v;
    }
    const branches = others.map((t) => ({ ...inner, type: t }));
    return { ...outer, anyOf: [...branches, { type: 'null' }] };
  }
  return out;
}
