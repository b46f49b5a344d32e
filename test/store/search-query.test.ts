import { describe, expect, it } from 'vitest';
import { fts5Query, searchTerms, snippet, tsQuery } from '../../src/store/index.js';

describe('search query text', () => {
  it('keeps only words, reads a phone number as its digits, and quotes every word for FTS5', () => {
    expect(searchTerms('  "Paket" OR NEAR(beschä*digt) ')).toEqual({ words: ['Paket', 'OR', 'NEAR', 'beschä', 'digt'], phone: false });
    expect(searchTerms('+49 (151) 123-45')).toEqual({ words: ['4915112345'], phone: true });
    expect(fts5Query(searchTerms('where is my re'))).toBe('"where" "is" "my" "re"*');
    expect(fts5Query(searchTerms('refund a'))).toBe('"refund" "a"');
    expect(tsQuery(searchTerms("it's x:* & !y"))).toBe('it & s & x & y');
    expect(fts5Query(searchTerms('!!!'))).toBeNull();
    expect(tsQuery(searchTerms(''))).toBeNull();
  });

  it('cuts a long text around the first word found, accents and case folded', () => {
    const long = `${'Lorem ipsum dolor sit amet. '.repeat(10)}Das Paket ist BESCHÄDIGT angekommen. ${'Consectetur adipiscing elit. '.repeat(10)}`;
    const s = snippet(long, ['beschadigt'], 80);
    expect(s).toContain('BESCHÄDIGT');
    expect(s.startsWith('…') && s.endsWith('…')).toBe(true);
    expect(s.length).toBeLessThanOrEqual(82);
    expect(snippet('short text', ['nothing'])).toBe('short text');
    expect(snippet(long, ['absent'], 40).startsWith('Lorem ipsum')).toBe(true);
  });
});
