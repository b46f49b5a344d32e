import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import * as addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS with a default export; under NodeNext it arrives wrapped.
const addFormats = addFormatsModule.default as unknown as (ajv: Ajv2020) => void;

interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
}

/** What a response broke: undocumented status, or a body the document's schema refuses. */
export interface ContractViolation {
  method: string;
  path: string;
  status: number;
  problem: string;
}

/**
 * Checks answers against the service's own `/openapi.json`: the status must
 * be one the operation documents, and a JSON body must match the schema
 * documented for it. Paths the document does not describe (MCP, the sandbox,
 * unknown endpoints) are not judged.
 */
export class OpenApiResponseChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
  private readonly templates: { method: string; template: string; re: RegExp; literal: number; op: Operation }[] = [];
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly doc: Document) {
    addFormats(this.ajv);
    for (const [template, ops] of Object.entries(doc.paths)) {
      const re = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/]+')}$`);
      const literal = template.replace(/\{\w+\}/g, '').length;
      for (const [method, op] of Object.entries(ops)) this.templates.push({ method: method.toUpperCase(), template, re, literal, op });
    }
    // The most specific template wins: `/x/sync` before `/x/{id}`.
    this.templates.sort((a, b) => b.literal - a.literal);
  }

  /** Resolves `#/components/schemas/...` so each schema compiles on its own. */
  private inline(schema: unknown): unknown {
    if (Array.isArray(schema)) return schema.map((s) => this.inline(s));
    if (schema === null || typeof schema !== 'object') return schema;
    const o = schema as Record<string, unknown>;
    if (typeof o.$ref === 'string' && o.$ref.startsWith('#/components/schemas/')) {
      return this.inline(this.doc.components.schemas[o.$ref.slice('#/components/schemas/'.length)]);
    }
    return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, this.inline(v)]));
  }

  check(method: string, url: string, status: number, body: unknown, contentType: string | null): ContractViolation | null {
    const path = url.split('?')[0]!;
    const hit = this.templates.find((t) => t.method === method.toUpperCase() && t.re.test(path));
    if (!hit) return null;
    const documented = hit.op.responses[String(status)];
    if (!documented) return { method, path: hit.template, status, problem: `status ${status} is not documented (documented: ${Object.keys(hit.op.responses).join(', ')})` };
    const schema = documented.content?.['application/json']?.schema;
    if (schema === undefined || body === undefined || !(contentType ?? '').includes('json')) return null;
    const key = `${hit.method} ${hit.template} ${status}`;
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(this.inline(schema) as object);
      this.compiled.set(key, validate);
    }
    if (validate(body)) return null;
    const e = validate.errors?.[0];
    return { method, path: hit.template, status, problem: `body does not match the schema: ${e?.instancePath || '/'} ${e?.message ?? ''} ${JSON.stringify(e?.params ?? {})}` };
  }
}
