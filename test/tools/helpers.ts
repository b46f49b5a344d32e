import { expect } from 'vitest';
import type { TestService } from '../harness/service.js';

/** Plays the person at the sandbox consent page: opens redirect_url, approves or denies, follows the provider's redirect to the service's callback. */
export async function signIn(svc: TestService, redirectUrl: string, opts: { decision?: 'approve' | 'deny'; email?: string } = {}): Promise<{ callbackUrl: string; status: number; location: string | null; body: string }> {
  const consent = await fetch(redirectUrl, { redirect: 'manual' });
  const html = await consent.text();
  if (consent.status !== 200) throw new Error(`consent page answered ${consent.status}: ${html.slice(0, 200)}`);
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1]?.replace(/&amp;/g, '&');
  const request = /name="request" value="([^"]+)"/.exec(html)?.[1];
  if (!action || !request) throw new Error('no consent form on the page');
  const form = new URLSearchParams({ request, email: opts.email ?? 'sandbox.user@example.com', decision: opts.decision ?? 'approve' });
  const decided = await fetch(action, { method: 'POST', body: form, redirect: 'manual' });
  const callbackUrl = decided.headers.get('location');
  if (decided.status !== 302 || !callbackUrl) throw new Error(`consent answered ${decided.status}`);
  // Not followed: the return URL is the app's, not reachable from here.
  const cb = await fetch(callbackUrl, { redirect: 'manual' });
  // The service's public URL (PUBLIC_URL, else http://localhost:<port>), whatever address the test called.
  expect(new URL(callbackUrl).origin).toBe(new URL(svc.running.url).origin);
  return { callbackUrl, status: cb.status, location: cb.headers.get('location'), body: await cb.text() };
}

/** A sandbox Stripe account of the organization whose API key `orgKey` is; its secret key. */
export async function sandboxStripeKey(svc: TestService, orgKey: string, name = 'Test Shop'): Promise<string> {
  const r = await fetch(`${svc.url}/sandbox/providers/stripe/accounts`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${orgKey}` }, body: JSON.stringify({ name }) });
  if (r.status !== 201) throw new Error(`sandbox account not created: ${r.status} ${await r.text()}`);
  return ((await r.json()) as { api_key: string }).api_key;
}

export async function fault(svc: TestService, f: { target: 'token' | 'gmail' | 'calendar' | 'stripe'; status: number; count?: number; retryAfter?: number; garbage?: boolean }): Promise<void> {
  const r = await fetch(`${svc.url}/sandbox/providers/control/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(f) });
  if (r.status !== 204) throw new Error(`fault not set: ${r.status}`);
}

export async function control(svc: TestService, path: string): Promise<any> {
  const r = await fetch(`${svc.url}/sandbox/providers/control${path}`, { method: path === '/stats' ? 'GET' : 'POST' });
  return r.json();
}
