import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';

/*
 * The providers' published definitions of what the sandboxes return
 * (test/fixtures/provider-schemas.json, written by
 * scripts/extract-provider-schemas.ts; its `source` says from where), as
 * validators.
 *
 * Google's discovery documents list every field of a resource, so an object
 * with a field they do not know fails too (`additionalProperties: false` added
 * here to each object schema with properties); they mark no response field as
 * always present. Stripe's spec marks the fields always present (`required`)
 * and their types; Meta's marks few, and both know fewer fields than the
 * current APIs return, so extra fields pass there (the field lists of the
 * current stripe typings, test/tools/provider-fields.ts, check those).
 */

type Provider = 'meta' | 'gmail' | 'calendar' | 'stripe';
type Json = Record<string, any>;

const fixture = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'provider-schemas.json'), 'utf8')) as Record<Provider, { definitions: Json }> & { source: Json };

function closed(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(closed);
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) out[k] = k === 'properties' ? Object.fromEntries(Object.entries(v as Json).map(([p, s]) => [p, closed(s)])) : closed(v);
  if (out.properties !== undefined && out.additionalProperties === undefined) out.additionalProperties = false;
  return out;
}

const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
for (const p of ['meta', 'gmail', 'calendar', 'stripe'] as const) {
  const definitions = p === 'gmail' || p === 'calendar' ? closed(fixture[p].definitions) : fixture[p].definitions;
  ajv.addSchema({ $id: `provider:${p}`, definitions });
}

/** Where the definitions came from, as the fixture notes it. */
export const providerSchemaSource = fixture.source;

/** Every way `value` departs from the provider's definition `name` (`/path message`), none when it conforms. */
export function schemaProblems(provider: Provider, name: string, value: unknown): string[] {
  if (!(name in fixture[provider].definitions)) throw new Error(`no ${provider} ${name} in the fixture`);
  const validate = ajv.getSchema(`provider:${provider}#/definitions/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`) as ValidateFunction;
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}${e.params && 'additionalProperty' in e.params ? `: ${String(e.params.additionalProperty)}` : ''}`);
}
