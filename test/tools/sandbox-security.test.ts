import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_CLIENT_ID } from '../../src/tools/index.js';
import { startTestService, type TestOrg, type TestService } from '../harness/service.js';
import { useClusterServers } from '../harness/use-servers.js';
import { sandboxStripeKey } from './helpers.js';

/** A POST with a Host header of the caller's choosing (fetch would send the URL's). */
function postWithHost(url: string, host: string, key: string, body: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = request(url, { method: 'POST', headers: { host, authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null') }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * The sandbox providers on the service's own origin: no open redirect, no
 * account without credentials, no request to a private address, and no
 * callback address taken from the Host header.
 */
function sandboxSecuritySuite(name: string, start: () => Promise<TestService>) {
  describe(`sandbox providers: redirects, accounts and outbound calls (${name})`, () => {
    let svc: TestService;
    let org: TestOrg;
    /** A receiver on loopback: anything the sandbox sends there is an SSRF. */
    let inside: Server;
    let insideHits = 0;
    let insidePort = 0;
    const sandbox = () => `${svc.url}/sandbox/providers`;
    const stripe = (key: string, path: string, body?: unknown) =>
      fetch(`${sandbox()}/stripe/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}) });

    beforeAll(async () => {
      svc = await start();
      org = await svc.createOrg('Sandbox security');
      inside = createServer((_req, res) => {
        insideHits++;
        res.end('ok');
      });
      await new Promise<void>((r) => inside.listen(0, '127.0.0.1', () => r()));
      insidePort = (inside.address() as AddressInfo).port;
    }, 60_000);
    afterAll(async () => {
      await new Promise((r) => inside?.close(r));
      await svc?.close();
    });

    it('the Google sandbox redirects only to the exact registered redirect_uri; any other gets the error page, no redirect', async () => {
      const authorize = (redirectUri: string) => {
        const u = new URL(`${sandbox()}/google/o/oauth2/v2/auth`);
        for (const [k, v] of Object.entries({ client_id: SANDBOX_CLIENT_ID, redirect_uri: redirectUri, response_type: 'code', scope: 'https://www.googleapis.com/auth/gmail.modify', state: 's', code_challenge: 'a'.repeat(43), code_challenge_method: 'S256' })) u.searchParams.set(k, v);
        return fetch(u, { redirect: 'manual' });
      };
      const registered = `${svc.running.url}/v1/tools/oauth/callback`;
      for (const evil of [
        'https://evil.example/v1/tools/oauth/callback',
        `${registered}/../../../evil`,
        `${registered}?next=https://evil.example`,
        `${svc.url}/v1/tools/oauth/callback`.replace(new URL(svc.running.url).host, 'evil.example'),
      ]) {
        const r = await authorize(evil);
        expect(r.status, evil).toBe(400);
        expect(r.headers.get('location'), evil).toBeNull();
        expect(await r.text()).toContain('redirect_uri_mismatch');
      }
      // Without response_type the registered URI gets the error sent back to it: that redirect is allowed.
      const ok = await authorize(registered);
      expect(ok.status).toBe(200);
    });

    it('creating a sandbox Stripe account needs an API key of an organization', async () => {
      const create = (headers: Record<string, string>) => fetch(`${sandbox()}/stripe/accounts`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{"name":"Anyone"}' });
      const none = await create({});
      expect(none.status).toBe(401);
      expect(await none.json()).toMatchObject({ success: false, error: { code: 'unauthorized' } });
      expect((await create({ authorization: 'Bearer org_not-a-key' })).status).toBe(401);
      const ok = await create({ authorization: `Bearer ${org.adminKey}` });
      expect(ok.status).toBe(201);
      expect(await ok.json()).toMatchObject({ id: expect.stringMatching(/^acct_/), api_key: expect.stringMatching(/^sk_test_sbx_/) });
    });

    it('refuses webhook endpoints on private, loopback, link-local and CGNAT addresses, and never calls them', async () => {
      const key = await sandboxStripeKey(svc, org.adminKey, 'SSRF Shop');
      for (const url of [
        'http://10.0.0.5/hook',
        'https://10.0.0.5/hook',
        'http://169.254.169.254/latest/meta-data/',
        `http://127.0.0.1:${insidePort}/hook`,
        `http://[::ffff:127.0.0.1]:${insidePort}/hook`,
        `http://[::1]:${insidePort}/hook`,
        `http://localhost:${insidePort}/hook`,
        'http://100.64.0.1/hook',
        'https://192.168.1.1/hook',
        // The service's own origin, but not its callback path.
        `${svc.running.url}/v1/tickets`,
      ]) {
        const r = await stripe(key, '/webhook_endpoints', { url, enabled_events: ['checkout.session.completed'] });
        expect(r.status, url).toBe(400);
        expect(((await r.json()) as any).error).toMatchObject({ code: 'url_invalid', param: 'url' });
      }
      const outside = await stripe(key, '/webhook_endpoints', { url: 'https://hooks.example.com/stripe', enabled_events: ['checkout.session.completed'] });
      expect(outside.status).toBe(200);
      // Deleted again: this test has no outside receiver to wait for.
      const endpointId = ((await outside.json()) as { id: string }).id;
      expect((await fetch(`${sandbox()}/stripe/v1/webhook_endpoints/${endpointId}`, { method: 'DELETE', headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
      // Paying a checkout delivers to the endpoints the account has: none of them inside.
      const session = (await (await stripe(key, '/checkout/sessions', { mode: 'payment', line_items: [{ quantity: 1, price_data: { currency: 'eur', unit_amount: 500, product_data: { name: 'Lid' } } }] })).json()) as { id: string };
      const paid = await fetch(`${sandbox()}/stripe/pay/${session.id}`, { method: 'POST', body: new URLSearchParams({ email: 'c@example.com', card: '4242424242424242' }), redirect: 'manual' });
      expect(paid.status).toBe(200);
      await new Promise((r) => setTimeout(r, 300));
      expect(insideHits).toBe(0);
    });

    it('payment connect and OAuth sign-in build their callback addresses from PUBLIC_URL, never from the Host header', async () => {
      const emailTool = await postWithHost(`${svc.url}/v1/integrations/email/connect`, 'evil.example:1234', org.adminKey, { name: 'Inbox' });
      expect(emailTool.status).toBe(201);
      expect(new URL(emailTool.body.redirect_url as string).searchParams.get('redirect_uri')).toBe(`${svc.running.url}/v1/tools/oauth/callback`);
      expect(emailTool.body.redirect_url).not.toContain('evil.example');
      const account = (await (await fetch(`${sandbox()}/stripe/accounts`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${org.adminKey}` }, body: '{"name":"Host Shop"}' })).json()) as { id: string; api_key: string };
      const paymentTool = await postWithHost(`${svc.url}/v1/integrations/payment/connect`, '10.0.0.5:3207', org.adminKey, { name: 'Shop', data: { api_key: account.api_key } });
      expect(paymentTool.status).toBe(201);
      expect(await svc.running.services.tools!.sandbox!.payments.endpointUrls(account.id)).toEqual([`${svc.running.url}/v1/tools/${paymentTool.body.id}/payment-webhook`]);
    });
  });
}

sandboxSecuritySuite('embedded', () => startTestService());

describe('clustered', () => {
  const servers = useClusterServers();
  sandboxSecuritySuite('clustered node, sandbox providers on', () =>
    startTestService({ env: { ...servers.env(`sb${Date.now() % 100000}`), NODE_ID: 's1', ACTOR_PARTITIONS: '4', SECRETS_KEY: '6'.repeat(64), SANDBOX_TOOLS: 'true' } }),
  );
});
