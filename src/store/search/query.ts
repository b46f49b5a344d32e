/*
 * A person's search box text as the full-text indexes' query languages: only
 * words (letters and digits) reach them, each quoted or plain, so nothing a
 * person types is read as query syntax. Every word must match; the last one
 * also matches as the start of a longer word (as typed so far).
 */

/** The words of a search, and whether it is a phone number (digits with spaces, `+`, `-`, dots or brackets). */
export interface SearchTerms {
  words: string[];
  phone: boolean;
}

const MAX_WORDS = 8;

export function searchTerms(text: string): SearchTerms {
  const t = text.normalize('NFC').trim();
  if (/^[\d\s+().-]+$/.test(t)) {
    const digits = t.replace(/\D/g, '');
    if (digits.length > 0) return { words: [digits], phone: true };
  }
  return { words: (t.match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, MAX_WORDS), phone: false };
}

/** Prefix matching only for a last word of two characters or more: one letter would match most of the index. */
const prefixed = (words: string[], i: number) => i === words.length - 1 && words[i]!.length >= 2;

/** Whether the query made of `terms` matches its last word as the start of a longer one. */
export const prefixesLast = (terms: SearchTerms): boolean => terms.words.length > 0 && prefixed(terms.words, terms.words.length - 1);

/** An FTS5 MATCH expression: every word as a quoted string, the last a prefix; null for no words. */
export function fts5Query(terms: SearchTerms): string | null {
  if (terms.words.length === 0) return null;
  return terms.words.map((w, i) => `"${w}"${prefixed(terms.words, i) ? '*' : ''}`).join(' ');
}

/** A `to_tsquery` text (fold it with `sb_fold` in SQL): words joined by `&`, the last a prefix; null for no words. */
export function tsQuery(terms: SearchTerms): string | null {
  if (terms.words.length === 0) return null;
  return terms.words.map((w, i) => `${w}${prefixed(terms.words, i) ? ':*' : ''}`).join(' & ');
}

/**
 * A few words of `text` around the first of `words` it contains (compared
 * with case and accents folded), `…` where it was cut; its start when none.
 */
export function snippet(text: string, words: string[], max = 120): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  // `lower` is `flat` folded; origin[i] is where its i-th code unit came from in `flat` (folding can change lengths).
  let lower = '';
  const origin: number[] = [];
  let pos = 0;
  for (const ch of flat) {
    const f = fold(ch);
    for (let k = 0; k < f.length; k++) origin.push(pos);
    lower += f;
    pos += ch.length;
  }
  let hit = -1;
  for (const w of words) {
    const i = lower.indexOf(fold(w));
    if (i >= 0 && (hit < 0 || i < hit)) hit = i;
  }
  const center = hit < 0 ? 0 : (origin[hit] ?? 0);
  let start = Math.max(0, center - Math.floor(max / 3));
  const end = Math.min(flat.length, start + max);
  start = Math.max(0, end - max);
  return `${start > 0 ? '…' : ''}${flat.slice(start, end).trim()}${end < flat.length ? '…' : ''}`;
}

/** Case and the accents of letters folded away, as the full-text indexes fold what they store. */
export function fold(s: string): string {
  return s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}
