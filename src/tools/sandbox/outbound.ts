import { checkWebhookUrl, WebhookHttpClient, type AddressPolicy } from '../../webhooks/index.js';

export interface SandboxOutboundOptions {
  /** The customer webhooks' policy (WEBHOOK_ALLOW_LOOPBACK). */
  policy: AddressPolicy;
  /** The service's own base URLs (PUBLIC_URL, this node's listening URL): their callback paths are the one non-public place the sandbox may call. */
  ownBaseUrls(): string[];
  /** The path prefix of the service's callbacks under those base URLs. */
  callbackPrefix: string;
  timeoutMs: number;
  userAgent: string;
}

/**
 * Where the sandbox providers may send requests (the sandbox Stripe's
 * webhook deliveries): through the customer webhooks' SSRF guard, so
 * private, loopback, link-local, carrier-grade NAT and metadata addresses
 * are refused, for literal IPs at registration and for every address a name
 * resolves to at connection time. The one exception is the service's own
 * callback address, which the payment connect registers (in embedded mode
 * `http://localhost:<port>`).
 */
export class SandboxOutbound {
  private readonly http: WebhookHttpClient;

  constructor(private readonly o: SandboxOutboundOptions) {
    this.http = new WebhookHttpClient({ policy: o.policy, timeoutMs: o.timeoutMs, userAgent: o.userAgent });
  }

  /** The service's own callback address: same origin as one of its base URLs, under the callback prefix. */
  isOwnCallback(raw: string): boolean {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return false;
    }
    if (url.username !== '' || url.password !== '') return false;
    return this.o.ownBaseUrls().some((base) => {
      const b = new URL(base);
      return b.origin === url.origin && url.pathname.startsWith(`${b.pathname.replace(/\/+$/, '')}${this.o.callbackPrefix}`);
    });
  }

  /** Why a URL may not be registered, or null when it may. */
  refusal(raw: string): string | null {
    if (this.isOwnCallback(raw)) return null;
    const check = checkWebhookUrl(raw, this.o.policy);
    return check.ok ? null : check.reason;
  }

  /** POSTs and says whether a 2xx came back; a forbidden address is never contacted. */
  async post(url: string, body: string, headers: Record<string, string>): Promise<{ ok: boolean; forbidden: boolean; error: string | null }> {
    if (this.isOwnCallback(url)) {
      try {
        const res = await fetch(url, { method: 'POST', headers: { ...headers, 'user-agent': this.o.userAgent }, body, signal: AbortSignal.timeout(this.o.timeoutMs), redirect: 'manual' });
        await res.arrayBuffer();
        return { ok: res.ok, forbidden: false, error: res.ok ? null : `status ${res.status}` };
      } catch (err) {
        return { ok: false, forbidden: false, error: err instanceof Error ? err.message : String(err) };
      }
    }
    const out = await this.http.post(url, body, headers);
    return { ok: out.status !== null && out.status >= 200 && out.status < 300, forbidden: out.forbidden, error: out.error };
  }

  close(): void {
    this.http.close();
  }
}
