import type { TestService } from '../harness/service.js';

/** One browser: keeps the session cookie and the CSRF token, and sends them the way the dashboard does. */
export class Browser {
  cookie: string | undefined;
  csrf: string | undefined;
  constructor(
    private readonly svc: TestService,
    private readonly address?: string,
  ) {}

  async login(email: string, password: string, extra: Record<string, unknown> = {}) {
    const r = await this.call('POST', '/v1/auth/login', { body: { email, password, ...extra }, csrf: false });
    if (r.status === 200) {
      this.csrf = r.body.csrfToken;
    }
    return r;
  }

  /** A request with the cookie; unsafe methods carry X-CSRF-Token unless `csrf: false`. */
  async call(method: string, path: string, o: { body?: unknown; csrf?: boolean | string; headers?: Record<string, string>; key?: string } = {}) {
    const headers: Record<string, string> = { ...o.headers };
    if (this.cookie !== undefined) headers.cookie = `sb_session=${this.cookie}`;
    if (this.address !== undefined) headers['x-forwarded-for'] = this.address;
    const unsafe = !['GET', 'HEAD'].includes(method);
    if (typeof o.csrf === 'string') headers['x-csrf-token'] = o.csrf;
    else if (unsafe && o.csrf !== false && this.csrf !== undefined) headers['x-csrf-token'] = this.csrf;
    const r = await this.svc.call(method, path, { body: o.body, headers, ...(o.key !== undefined ? { key: o.key } : {}) });
    const set = r.headers.get('set-cookie');
    if (set !== null) {
      const m = /^sb_session=([^;]*)/.exec(set);
      if (m) this.cookie = m[1] === '' ? undefined : m[1];
    }
    return r;
  }
}

export const PASSWORD = 'correct horse battery';
