/*
 * How well a text matches a search's words, computed over the candidates an
 * adapter found (never over the whole index): each word counts by how often
 * the text says it, a long text's words a little less (BM25's term part,
 * k1 = 1.2, b = 0.75, against the candidates' mean length). Every word
 * weighs the same: a word's rarity across the whole index (BM25's IDF) would
 * cost a pass over all of that word's matches, which for a word said in a
 * tenth of a million messages is most of a search's time. PostgreSQL's
 * ts_rank does without it too, so both modes rank alike.
 */

import { fold } from './query.js';

const K1 = 1.2;
const B = 0.75;

/** The words of a text as the full-text indexes see them: letters and digits, case and accents folded. */
export function tokens(text: string): string[] {
  return fold(text).match(/[\p{L}\p{N}]+/gu) ?? [];
}

/**
 * The candidates' indexes, best match first and, among equal ones, in the
 * order given (callers pass them newest first). `prefixLast`: the last word
 * also matches as the start of a longer one, as the query did.
 */
export function rankByWords(texts: readonly string[], words: readonly string[], prefixLast: boolean): number[] {
  const wanted = words.map((w) => tokens(w).join(''));
  const docs = texts.map(tokens);
  const mean = docs.reduce((n, d) => n + d.length, 0) / Math.max(1, docs.length) || 1;
  const scores = docs.map((doc) => {
    let score = 0;
    wanted.forEach((w, i) => {
      const prefix = prefixLast && i === wanted.length - 1;
      let tf = 0;
      for (const t of doc) if (prefix ? t.startsWith(w) : t === w) tf++;
      score += (tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * doc.length) / mean));
    });
    return score;
  });
  return texts.map((_, i) => i).sort((a, b) => scores[b]! - scores[a]! || a - b);
}
