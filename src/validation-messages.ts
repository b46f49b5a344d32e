import type { z } from 'zod';

/**
 * Validation messages in the caller's words: the field named as they sent it
 * (`template.language.code`, `interactive.buttons[1].title`) and what it
 * must be ("description is required", "priority must be one of "low",
 * "medium", "high""), instead of zod's "Invalid input: expected string,
 * received undefined".
 *
 * Two steps. `inUserWords` is the zod error map for one parse
 * (`schema.safeParse(v, { error: inUserWords })`), so a message a schema
 * states itself (`.refine(..., { message })`, `z.string({ error })`) still
 * wins, and the issue is seen with its input (which is how a missing field
 * is told from a wrong one). It writes `{field}` (and `{prefix}`, the field
 * and a dot) where the name goes, because inside a union zod words an issue
 * before it knows the whole path; `renderMessage` fills them in from the
 * final path.
 */

type Issue = z.core.$ZodRawIssue;

/** `a.b[0].c`: how the caller wrote the field in their JSON. */
export function fieldName(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}

/** Where the validated value came from, which names it when the issue is about the whole of it. */
export type ValidatedPart = 'body' | 'query' | 'params' | 'arguments' | 'frame';
const WHOLE: Record<ValidatedPart, string> = { body: 'the request body', query: 'the query', params: 'the path', arguments: 'the arguments', frame: 'the frame' };

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  bigint: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
  date: 'a date',
};

const FORMAT_WORDS: Record<string, string> = {
  email: 'an email address',
  url: 'a URL',
  uuid: 'a UUID',
  datetime: 'a date and time like 2026-01-05T09:30:00Z',
  date: 'a date like 2026-01-05',
  time: 'a time like 09:30:00',
  e164: 'a phone number in E.164 form like +4915112345678',
  base64: 'base64',
  jwt: 'a JWT',
};

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'a number' : 'a fraction';
  return TYPE_WORDS[typeof v] ?? typeof v;
}

const plural = (n: number | bigint, one: string) => `${n} ${one}${Number(n) === 1 ? '' : 's'}`;

function sizeWords(iss: { origin: string; inclusive?: boolean }, n: number | bigint, least: boolean): string {
  const bound = least ? (iss.inclusive === false ? 'more than' : 'at least') : iss.inclusive === false ? 'fewer than' : 'at most';
  switch (iss.origin) {
    case 'string':
      return `${bound} ${plural(n, 'character')} long`;
    case 'array':
    case 'set':
      return `${bound} ${plural(n, 'item')}`;
    case 'file':
      return `${bound} ${plural(n, 'byte')}`;
    default:
      if (iss.inclusive === false) return `${least ? 'greater' : 'less'} than ${n}`;
      return `${least ? 'at least' : 'at most'} ${n}`;
  }
}

const FIELD = '{field}';
const PREFIX = '{prefix}';

/**
 * The zod error map: the message for one issue with `{field}` for its name,
 * or undefined for zod's own (a `custom` issue without a message).
 */
export function inUserWords(iss: Issue): string | undefined {
  const field = FIELD;
  switch (iss.code) {
    case 'invalid_type':
      if (iss.input === undefined) return `${field} is required`;
      return `${field} must be ${TYPE_WORDS[iss.expected] ?? iss.expected}, not ${kindOf(iss.input)}`;
    case 'too_small':
      if (iss.origin === 'string' && Number(iss.minimum) === 1) return `${field} must not be empty`;
      if ((iss.origin === 'array' || iss.origin === 'set') && Number(iss.minimum) === 1) return `${field} must have at least one item`;
      return `${field} must be ${sizeWords(iss, iss.minimum, true)}`;
    case 'too_big':
      return `${field} must be ${sizeWords(iss, iss.maximum, false)}`;
    case 'invalid_format': {
      if (iss.format === 'regex') return `${field} has the wrong form${'pattern' in iss && typeof iss.pattern === 'string' ? ` (it must match ${iss.pattern})` : ''}`;
      if (iss.format === 'starts_with' && 'prefix' in iss) return `${field} must start with "${String(iss.prefix)}"`;
      if (iss.format === 'ends_with' && 'suffix' in iss) return `${field} must end with "${String(iss.suffix)}"`;
      if (iss.format === 'includes' && 'includes' in iss) return `${field} must contain "${String(iss.includes)}"`;
      return `${field} must be ${FORMAT_WORDS[iss.format] ?? `a valid ${iss.format}`}`;
    }
    case 'invalid_value': {
      const values = iss.values.map((v) => JSON.stringify(v));
      return values.length === 1 ? `${field} must be ${values[0]}` : `${field} must be one of ${values.join(', ')}`;
    }
    case 'unrecognized_keys': {
      const names = iss.keys.map((k) => `${PREFIX}${k}`);
      return names.length === 1 ? `${names[0]} is not a field here` : `${names.join(', ')} are not fields here`;
    }
    case 'invalid_union':
      if (iss.input === undefined) return `${field} is required`;
      return `${field} matches none of the forms it may take`;
    case 'not_multiple_of':
      return `${field} must be a multiple of ${iss.divisor}`;
    case 'invalid_key':
      return `${field} has a key it does not accept`;
    case 'invalid_element':
      return `${field} has an element it does not accept`;
    default:
      return undefined;
  }
}

/** How a message names the field at `path`: its dotted name, or the whole part (`the request body`) at the root. */
export function fieldLabel(path: readonly PropertyKey[], where: ValidatedPart): string {
  const name = fieldName(path);
  return name === '' ? WHOLE[where] : name;
}

/** A message from `inUserWords` with the field's name filled in from the issue's final path; any other as it is. */
export function renderMessage(message: string, path: readonly PropertyKey[], where: ValidatedPart): string {
  if (!message.includes(FIELD) && !message.includes(PREFIX)) return message;
  const name = fieldName(path);
  return message.replaceAll(FIELD, fieldLabel(path, where)).replaceAll(PREFIX, name === '' ? '' : `${name}.`);
}

/** Whether `message` is one `inUserWords` wrote (and so names its field itself). */
export function namesItsField(message: string): boolean {
  return message.includes(FIELD) || message.includes(PREFIX);
}
