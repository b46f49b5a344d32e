/**
 * The checks every JSON body passes before it is parsed (`npm run bench -- request-checks`):
 * nesting depth (`jsonTooDeep`) and text no store keeps (`unstorableTextInJson`: a scan for
 * escapes, then a parse and walk only when one could hold such text), each against
 * `JSON.parse` of the same body in the same run, on a template send's body and on a 64 KB one.
 */
import { jsonTooDeep } from '../src/json-depth.js';
import { unstorableTextInJson } from '../src/storable-text.js';

const ROUNDS = 5;

/** Nanoseconds per call of `fn`, the best of ROUNDS rounds of `n` calls. */
function timeNs(fn: () => unknown, n: number): number {
  let best = Infinity;
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) fn();
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / n);
  }
  return best;
}

export async function run(): Promise<void> {
  const send = { channelId: 'ch_Q8wLr3VnT5kZx2Hb', to: '4915112345678', template: { name: 'order_update', language: { code: 'en' }, components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ann' }, { type: 'text', text: '#1042' }, { type: 'text', text: 'Thursday' }] }] } };
  const big = { subject: 'Order 1042', description: 'Grüße aus Köln – the lid arrived broken. '.repeat(1500), attributes: { emoji: '😀'.repeat(200) } };
  console.log('\n## Checks on every JSON body (best of 5 rounds)\n');
  console.log('| body | JSON.parse (baseline) | depth check | text check | both, ratio to the parse | text check when the body has escapes (walk included) |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const [name, value, n] of [['template send', send, 200_000], ['64 KB ticket, non-ASCII', big, 500]] as const) {
    const buf = Buffer.from(JSON.stringify(value));
    // The same body with an emoji written as its escaped surrogate pair: the scan finds a `\ud8..` escape and the value is walked.
    const escaped = Buffer.from(JSON.stringify({ ...value, note: '😀' }).replace(/😀/g, '\\ud83d\\ude00'));
    const parse = timeNs(() => JSON.parse(buf.toString('utf8')), n);
    const depth = timeNs(() => jsonTooDeep(buf), n);
    const text = timeNs(() => unstorableTextInJson(buf), n);
    const withWalk = timeNs(() => unstorableTextInJson(escaped), n);
    const us = (ns: number) => `${(ns / 1000).toFixed(2)} µs`;
    console.log(`| ${name} (${buf.length} bytes) | ${us(parse)} | ${us(depth)} | ${us(text)} | ${((depth + text) / parse).toFixed(2)} | ${us(withWalk)} |`);
  }
}
