import type { Express } from 'express';
import { rawBodyApp } from './http-helpers.js';

/**
 * A small fake of the Graph API that answers with the recorded shapes of
 * real responses, including the error envelopes. Which answer it gives
 * depends on the recipient (`to`), so one fake covers every case.
 */
export const FAKE_RECIPIENTS = {
  ok: '16505551234',
  templateMissing: '16505550001',
  rateLimited: '16505550002',
  paramMismatch: '16505550003',
  notAllowed: '16505550004',
  serverDown: '16505550005',
  hang: '16505550006',
  garbage2xx: '16505550007',
} as const;

export const FAKE_TOKEN = 'EAAJBfaketoken';

export function fakeGraphApp(requests: { path: string; body: unknown; auth: string | undefined }[] = []): Express {
  const app = rawBodyApp();
  let sent = 0;
  app.post('/v27.0/:pnid/messages', (req, res) => {
    requests.push({ path: req.path, body: req.body, auth: req.headers.authorization });
    if (req.headers.authorization !== `Bearer ${FAKE_TOKEN}`) {
      res.status(401).json({ error: { message: 'Invalid OAuth access token - Cannot parse access token', type: 'OAuthException', code: 190, fbtrace_id: 'AWbG5kYz1' } });
      return;
    }
    const to = (req.body as { to?: string }).to;
    switch (to) {
      case FAKE_RECIPIENTS.templateMissing:
        res.status(404).json({
          error: {
            message: '(#132001) Template name does not exist in the translation',
            type: 'OAuthException',
            code: 132001,
            error_data: { messaging_product: 'whatsapp', details: 'template name (order_updat) does not exist in en_US' },
            fbtrace_id: 'A3mQzLk0c',
          },
        });
        return;
      case FAKE_RECIPIENTS.rateLimited:
        res.status(400).json({ error: { message: '(#130429) Rate limit hit', type: 'OAuthException', code: 130429, error_data: { messaging_product: 'whatsapp', details: 'Cloud API message throughput has been reached.' }, fbtrace_id: 'Bq1' } });
        return;
      case FAKE_RECIPIENTS.paramMismatch:
        res.status(400).json({
          error: {
            message: '(#132000) Number of parameters does not match the expected number of params',
            type: 'OAuthException',
            code: 132000,
            error_data: { messaging_product: 'whatsapp', details: 'body: number of localizable_params (1) does not match the expected number of params (3)' },
            fbtrace_id: 'Cx9',
          },
        });
        return;
      case FAKE_RECIPIENTS.notAllowed:
        res.status(400).json({
          error: {
            message: '(#131030) Recipient phone number not in allowed list',
            type: 'OAuthException',
            code: 131030,
            error_data: { messaging_product: 'whatsapp', details: 'Recipient phone number not in allowed list: Add recipient phone number to recipient list and try again.' },
            error_subcode: 2655007,
            fbtrace_id: 'D77',
          },
        });
        return;
      case FAKE_RECIPIENTS.serverDown:
        res.status(502).type('html').send('<html><body>502 Bad Gateway</body></html>');
        return;
      case FAKE_RECIPIENTS.hang:
        return; // never answers
      case FAKE_RECIPIENTS.garbage2xx:
        res.status(200).json({ ok: true });
        return;
      default:
        {
          // A send by business-scoped user id (`recipient`) is answered with the id as `user_id`, no `wa_id`.
          const recipient = (req.body as { recipient?: string }).recipient;
          const contact = to === undefined && recipient !== undefined ? { input: recipient, user_id: recipient } : { input: to, wa_id: to };
          res.status(200).json({ messaging_product: 'whatsapp', contacts: [contact], messages: [{ id: `wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBJDQjZCMzlEQUE4OTJBMTE4RTUA${sent++ === 0 ? '' : sent}` }] });
        }
    }
  });
  app.get('/v27.0/:waba/message_templates', (req, res) => {
    requests.push({ path: req.path, body: req.query, auth: req.headers.authorization });
    if (req.headers.authorization !== `Bearer ${FAKE_TOKEN}`) {
      res.status(401).json({ error: { message: 'Invalid OAuth access token - Cannot parse access token', type: 'OAuthException', code: 190, fbtrace_id: 'x' } });
      return;
    }
    const page2 = req.query.after === 'MQ';
    const host = `http://${req.headers.host}`;
    res.json(
      page2
        ? { data: [{ name: 'order_update', language: 'en_US', status: 'APPROVED', category: 'UTILITY', id: '2', components: [{ type: 'BODY', text: 'Hi {{1}}' }] }], paging: { cursors: { before: 'MQ', after: 'Mg' } } }
        : {
            data: [{ name: 'hello_world', language: 'en_US', status: 'APPROVED', category: 'UTILITY', id: '1', components: [{ type: 'BODY', text: 'Hello' }] }],
            paging: { cursors: { before: 'MA', after: 'MQ' }, next: `${host}/v27.0/${req.params.waba}/message_templates?limit=1&after=MQ` },
          },
    );
  });
  return app;
}
