import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A field list of test/fixtures/provider-fields.json (see scripts/extract-provider-fields.ts). */
interface Shape {
  required: Record<string, Shape | null>;
  optional: string[];
  array?: true;
}

const fixture = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'provider-fields.json'), 'utf8')) as Record<'stripe' | 'gmail' | 'calendar', Record<string, Shape>>;

/**
 * What an object lacks or has too much against the provider's published
 * definition: each field the definition always returns and the object does
 * not carry (`missing a.b`), each field the definition does not know
 * (`unknown a.b`), walking nested objects the definition describes.
 */
export function fieldProblems(provider: 'stripe' | 'gmail' | 'calendar', type: string, value: unknown): string[] {
  const shape = fixture[provider][type];
  if (shape === undefined) throw new Error(`no ${provider} ${type} in the fixture`);
  const out: string[] = [];
  const walk = (s: Shape, v: unknown, path: string) => {
    if (v === null || v === undefined) return;
    if (s.array) {
      if (!Array.isArray(v)) return void out.push(`not a list ${path}`);
      v.forEach((item, i) => walk({ ...s, array: undefined }, item, `${path}[${i}]`));
      return;
    }
    if (typeof v !== 'object' || Array.isArray(v)) return void out.push(`not an object ${path}`);
    const o = v as Record<string, unknown>;
    const known = new Set([...Object.keys(s.required), ...s.optional]);
    for (const k of Object.keys(o)) if (!known.has(k)) out.push(`unknown ${path}${k}`);
    for (const [k, inner] of Object.entries(s.required)) {
      if (!(k in o)) out.push(`missing ${path}${k}`);
      else if (inner !== null) walk(inner, o[k], `${path}${k}.`);
    }
  };
  walk(shape, value, '');
  return out;
}
