/*
 * Writes test/fixtures/meta-webhook-examples.json: every webhook payload
 * example Meta publishes in its OpenAPI description of the WhatsApp Cloud API
 * (github.com/facebook/openapi, business-messaging-api_v23.0.yaml), the
 * examples of `POST /whatsapp/webhooks` (one per inbound message type and
 * status). test/messaging/meta-webhook-examples.test.ts posts each of them to
 * a running service.
 *
 *   npx tsx scripts/extract-meta-webhook-examples.ts /path/to/business-messaging-api_v23.0.yaml [commit]
 *
 * The YAML parser is js-yaml (a devDependency).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join } from 'node:path';

const [file, commit = 'ecba623'] = process.argv.slice(2);
if (!file) {
  console.error('usage: extract-meta-webhook-examples.ts <business-messaging-api_vNN.yaml> [commit]');
  process.exit(2);
}
const yaml = createRequire(import.meta.url)('js-yaml') as { load(text: string): unknown };
const spec = yaml.load(readFileSync(file, 'utf8')) as {
  info?: { version?: string };
  paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { examples?: Record<string, { value: unknown }> }> } }>>;
};
const post = spec.paths['/whatsapp/webhooks']?.post;
const examples = post?.requestBody?.content?.['application/json']?.examples;
if (!examples) throw new Error('no examples under paths./whatsapp/webhooks.post.requestBody');

const version = /_(v\d+\.\d+)\.ya?ml$/.exec(basename(file))?.[1] ?? spec.info?.version ?? '?';
const out = {
  source: {
    repository: 'https://github.com/facebook/openapi',
    // The file's name in that repository (a local copy may carry a prefix).
    file: basename(file).replace(/^.*?(business-messaging-api_)/, '$1'),
    commit,
    version,
    path: 'paths./whatsapp/webhooks.post.requestBody.content.application/json.examples',
    note: 'The file publishes no status webhook example (statuses only as the StatusMessageValue schema).',
  },
  examples: Object.entries(examples).map(([name, e]) => ({ name, payload: e.value })),
};
const target = join(import.meta.dirname, '..', 'test', 'fixtures', 'meta-webhook-examples.json');
writeFileSync(target, JSON.stringify(out, null, 2) + '\n');
console.log(`${out.examples.length} examples written to ${target}`);
