/*
 * Writes test/fixtures/provider-fields.json: the fields of the objects the
 * sandboxes return, as the providers' official clients declare them (the
 * `stripe` package's types are generated from Stripe's OpenAPI spec, a field
 * without `?` is one Stripe always returns; the googleapis typings are
 * generated from Google's discovery documents, where no response field is
 * marked as always present, so only the known fields are listed).
 *
 *   npx tsx scripts/extract-provider-fields.ts
 *
 * Run again after upgrading those devDependencies; the fixture notes the
 * versions it was read from.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const root = join(import.meta.dirname, '..');
const pkgDir = (name: string) => join(root, 'node_modules', name);
const version = (name: string) => (JSON.parse(readFileSync(join(pkgDir(name), 'package.json'), 'utf8')) as { version: string }).version;

/** A field list: `required` (always present; a nested object's own list when it is one), `optional`. */
interface Shape {
  required: Record<string, Shape | null>;
  optional: string[];
  /** The field is a list of such objects. */
  array?: true;
}

const stripeDir = join(pkgDir('stripe'), 'esm', 'resources');
const targets = {
  stripe: {
    files: ['Checkout/Sessions.d.ts', 'PaymentIntents.d.ts', 'WebhookEndpoints.d.ts', 'Accounts.d.ts', 'Events.d.ts', 'Refunds.d.ts'].map((f) => join(stripeDir, f)),
    types: { 'checkout.session': 'Checkout/Sessions.d.ts#Session', payment_intent: 'PaymentIntents.d.ts#PaymentIntent', webhook_endpoint: 'WebhookEndpoints.d.ts#WebhookEndpoint', account: 'Accounts.d.ts#Account', event: 'Events.d.ts#CheckoutSessionCompletedEvent', refund: 'Refunds.d.ts#Refund' },
    dir: stripeDir,
  },
  gmail: {
    files: [join(pkgDir('@googleapis/gmail'), 'build', 'v1.d.ts')],
    types: { Message: 'v1.d.ts#gmail_v1.Schema$Message', MessagePart: 'v1.d.ts#gmail_v1.Schema$MessagePart', MessagePartBody: 'v1.d.ts#gmail_v1.Schema$MessagePartBody', Profile: 'v1.d.ts#gmail_v1.Schema$Profile', ListMessagesResponse: 'v1.d.ts#gmail_v1.Schema$ListMessagesResponse', Thread: 'v1.d.ts#gmail_v1.Schema$Thread' },
    dir: join(pkgDir('@googleapis/gmail'), 'build'),
  },
  calendar: {
    files: [join(pkgDir('@googleapis/calendar'), 'build', 'v3.d.ts')],
    types: { Event: 'v3.d.ts#calendar_v3.Schema$Event', Events: 'v3.d.ts#calendar_v3.Schema$Events' },
    dir: join(pkgDir('@googleapis/calendar'), 'build'),
  },
};

function shapeOf(checker: ts.TypeChecker, type: ts.Type, depth: number, seen: Set<ts.Type>): Shape | null {
  if (depth > 4 || seen.has(type)) return null;
  if (checker.isArrayType(type)) {
    const item = checker.getTypeArguments(type as ts.TypeReference)[0];
    const inner = item === undefined || item.isUnion() ? null : shapeOf(checker, item, depth, seen);
    return inner === null ? null : { ...inner, array: true };
  }
  // Only plain object shapes declared as interfaces are walked: ids-or-objects (expandable) unions, arrays of scalars, metadata maps stop here.
  if (!(type.flags & ts.TypeFlags.Object) || type.getStringIndexType() !== undefined) return null;
  const sym = type.getSymbol();
  if (sym === undefined || !(sym.flags & ts.SymbolFlags.Interface)) return null;
  const next = new Set(seen).add(type);
  const out: Shape = { required: {}, optional: [] };
  for (const p of checker.getPropertiesOfType(type)) {
    const decl = p.valueDeclaration ?? p.declarations?.[0];
    if (decl === undefined) continue;
    if (p.flags & ts.SymbolFlags.Optional) {
      out.optional.push(p.name);
      continue;
    }
    const pt = checker.getNonNullableType(checker.getTypeOfSymbolAtLocation(p, decl));
    out.required[p.name] = pt.isUnion() ? null : shapeOf(checker, pt, depth + 1, next);
  }
  return out;
}

function extract(files: string[], types: Record<string, string>, dir: string): Record<string, Shape> {
  const program = ts.createProgram(files, { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, skipLibCheck: true, noEmit: true });
  const checker = program.getTypeChecker();
  const out: Record<string, Shape> = {};
  for (const [name, where] of Object.entries(types)) {
    const [file, path] = where.split('#') as [string, string];
    const sf = program.getSourceFile(join(dir, file));
    if (sf === undefined) throw new Error(`no ${file}`);
    let sym: ts.Symbol | undefined = checker.getSymbolAtLocation(sf);
    const parts = path.split('.');
    let scope = sym ? checker.getExportsOfModule(sym) : [];
    for (const [i, part] of parts.entries()) {
      sym = scope.find((s) => s.name === part);
      if (sym === undefined) throw new Error(`no ${path} in ${file}`);
      if (i < parts.length - 1) scope = checker.getExportsOfModule(sym);
    }
    const type = checker.getDeclaredTypeOfSymbol(sym!);
    const shape = shapeOf(checker, type, 0, new Set());
    if (shape === null) throw new Error(`${path} is not an interface`);
    out[name] = shape;
  }
  return out;
}

const fixture = {
  source:
    'Generated by scripts/extract-provider-fields.ts from the typings of the official clients: `stripe` (types generated from github.com/stripe/openapi; a field without `?` is always present, null or not), `@googleapis/gmail` and `@googleapis/calendar` (generated from the Gmail v1 and Calendar v3 discovery documents, which mark no response field as always present: every field is optional there).',
  versions: { stripe: version('stripe'), stripeOpenApi: readFileSync(join(pkgDir('stripe'), 'OPENAPI_VERSION'), 'utf8').trim(), '@googleapis/gmail': version('@googleapis/gmail'), '@googleapis/calendar': version('@googleapis/calendar') },
  stripe: extract(targets.stripe.files, targets.stripe.types, targets.stripe.dir),
  gmail: extract(targets.gmail.files, targets.gmail.types, targets.gmail.dir),
  calendar: extract(targets.calendar.files, targets.calendar.types, targets.calendar.dir),
};
writeFileSync(join(root, 'test', 'fixtures', 'provider-fields.json'), JSON.stringify(fixture, null, 1) + '\n');
console.log('wrote test/fixtures/provider-fields.json');
