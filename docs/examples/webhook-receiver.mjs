// A webhook receiver for trying Switchboard locally. Plain Node.js, no dependencies.
//
//   SB_HOOK_SECRET=whsec_... node docs/examples/webhook-receiver.mjs [port]
//
// It listens on the port given (default: any free one), prints its URL as the first line, then one
// line per request: whether both signatures (X-Signature and Standard Webhooks) verified with
// SB_HOOK_SECRET, the event type and the event id. It answers 204 when they did, 400 when not.
import { createServer } from 'node:http';
import { verifyStandardWebhook, verifyXSignature } from './verify-webhook.mjs';

const secret = process.env.SB_HOOK_SECRET;
if (!secret) {
  console.error('set SB_HOOK_SECRET to the secret the deliveries are signed with (whsec_...)');
  process.exit(2);
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(chunks); // verify the bytes as received, before parsing
    const verified = verifyXSignature(secret, raw, req.headers['x-signature']) && verifyStandardWebhook(secret, req.headers, raw);
    let type = '?';
    let id = req.headers['webhook-id'] ?? '?';
    try {
      ({ type, id } = JSON.parse(raw.toString('utf8')));
    } catch {
      // not JSON: reported as unverified below
    }
    console.log(`${verified ? 'verified  ' : 'REJECTED  '} ${String(type).padEnd(20)} ${id}`);
    res.writeHead(verified ? 204 : 400).end();
  });
});

server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  console.log(`http://127.0.0.1:${server.address().port}/hook`);
});
