import { fieldLabel, type ValidatedPart } from './validation-messages.js';

/**
 * Text that one of the stores cannot keep: PostgreSQL refuses U+0000 in
 * `text` and in `jsonb` (`\u0000`), and `jsonb` refuses an unpaired
 * surrogate (`\ud800` alone), which is not Unicode text at all. SQLite would
 * keep both, but the two modes answer alike: such text is refused where it
 * comes in (400), or, where refusing would lose a customer's message (the
 * chat network's webhooks), replaced by U+FFFD.
 */
export interface UnstorableText {
  /** Where it is: object keys and array positions from the value's root. */
  path: (string | number)[];
  problem: 'nul' | 'unpaired_surrogate';
}

/** A high surrogate not followed by a low one, or a low one not after a high one (code units, no `u` flag). */
const UNPAIRED = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const UNPAIRED_ALL = new RegExp(UNPAIRED.source, 'g');

const problemOf = (s: string): UnstorableText['problem'] | null => (s.includes('\u0000') ? 'nul' : UNPAIRED.test(s) ? 'unpaired_surrogate' : null);

interface Visit {
  value: unknown;
  key: string | number | null;
  parent: Visit | null;
}

const pathOf = (v: Visit | null): (string | number)[] => {
  const path: (string | number)[] = [];
  for (let at = v; at !== null && at.key !== null; at = at.parent) path.unshift(at.key);
  return path;
};

/**
 * The first string (value or key) in `value` that no store keeps, depth
 * first; null when there is none. Iterative: it runs on values no depth
 * check has bounded (a socket frame of 64 KB can nest 30,000 deep).
 */
export function unstorableText(value: unknown): UnstorableText | null {
  const stack: Visit[] = [{ value, key: null, parent: null }];
  while (stack.length > 0) {
    const at = stack.pop()!;
    const v = at.value;
    if (typeof v === 'string') {
      const problem = problemOf(v);
      if (problem !== null) return { path: pathOf(at), problem };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], key: i, parent: at });
    } else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v);
      for (const [k] of entries) {
        const problem = problemOf(k);
        if (problem !== null) return { path: [...pathOf(at), k], problem };
      }
      for (let i = entries.length - 1; i >= 0; i--) stack.push({ value: entries[i]![1], key: entries[i]![0], parent: at });
    }
  }
  return null;
}

/**
 * Whether JSON text may hold such a string: only the escapes `\u0000` and
 * `\ud800`–`\udfff` can put one there (raw NUL is not valid JSON, and UTF-8
 * cannot encode a surrogate). A cheap test for every body; a match (a valid
 * surrogate pair matches too) is decided by `unstorableText` on the value.
 */
export function mayHoldUnstorableText(json: Uint8Array): boolean {
  const bytes = Buffer.isBuffer(json) ? json : Buffer.from(json.buffer, json.byteOffset, json.byteLength);
  for (let i = bytes.indexOf('\\u'); i !== -1; i = bytes.indexOf('\\u', i + 2)) {
    const a = bytes[i + 2];
    const b = bytes[i + 3];
    // '0' and 'd' / 'D'
    if (a === 0x30 && b === 0x30 && bytes[i + 4] === 0x30 && bytes[i + 5] === 0x30) return true;
    if (a === 0x64 || a === 0x44) return true;
  }
  return false;
}

/**
 * Text no store keeps in a JSON body: the scan of its bytes and, only when
 * that finds an escape, the walk of its value (`parsed`, when the caller has
 * it already; else parsed here, and null when it is not JSON, which the
 * caller's parser reports).
 */
export function unstorableTextInJson(json: Uint8Array, parsed?: { value: unknown }): UnstorableText | null {
  if (!mayHoldUnstorableText(json)) return null;
  if (parsed !== undefined) return unstorableText(parsed.value);
  try {
    return unstorableText(JSON.parse(Buffer.from(json.buffer, json.byteOffset, json.byteLength).toString('utf8')));
  } catch {
    return null;
  }
}

/**
 * A copy of `value` with every U+0000 and unpaired surrogate (in values and
 * keys) replaced by U+FFFD. It recurses: only for values whose depth was
 * checked (`jsonTooDeep`), as the webhook bodies it is used on are.
 */
export function storableCopy<T>(value: T): T {
  const fix = (s: string) => s.replaceAll('\u0000', '\ufffd').replace(UNPAIRED_ALL, '\ufffd');
  const copy = (v: unknown): unknown => {
    if (typeof v === 'string') return fix(v);
    if (Array.isArray(v)) return v.map(copy);
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [fix(k), copy(x)]));
    return v;
  };
  return unstorableText(value) === null ? value : (copy(value) as T);
}

/** What to tell the sender, in the words of validation messages: `subject must not contain …`. */
export function unstorableTextMessage(found: UnstorableText, where: ValidatedPart): string {
  const subject = fieldLabel(found.path, where);
  return found.problem === 'nul'
    ? `${subject} must not contain the NUL character (U+0000)`
    : `${subject} must be Unicode text: it holds an unpaired surrogate (a \\ud800–\\udfff escape without its pair)`;
}
