import { AppError } from '../../errors.js';
import type { GmailPart } from './mime.js';
import { ProviderHttp } from './http.js';

/** users.messages resource (format=full or metadata). */
export interface GmailMessage {
  id: string;
  threadId: string;
  labelIds?: string[];
  snippet?: string;
  historyId?: string;
  /** Epoch milliseconds, as a decimal string. */
  internalDate?: string;
  sizeEstimate?: number;
  payload?: GmailPart;
}

export interface GmailLabel {
  id: string;
  name: string;
  type?: 'system' | 'user';
  messagesTotal?: number;
  messagesUnread?: number;
}

function shape<T>(v: unknown, check: (o: Record<string, unknown>) => boolean, what: string): T {
  if (v === null || typeof v !== 'object' || !check(v as Record<string, unknown>)) {
    throw new AppError(503, 'provider_bad_response', `Gmail answered ${what} in a shape its API does not have; try again later`, undefined, { retryAfterSeconds: 10 });
  }
  return v as T;
}

/**
 * The Gmail REST API (v1) for the signed-in user (`users/me`): messages,
 * drafts, labels. `baseUrl` is `https://gmail.googleapis.com` or the
 * sandbox mailbox; every call takes the current access token.
 */
export class GmailClient {
  private readonly http: ProviderHttp;
  constructor(
    private readonly baseUrl: () => string,
    timeoutMs: number,
  ) {
    this.http = new ProviderHttp('Gmail', timeoutMs);
  }

  private async call(token: string, method: string, path: string, opts: { query?: Record<string, string | string[] | undefined>; json?: unknown } = {}): Promise<unknown> {
    const u = new URL(`${this.baseUrl().replace(/\/+$/, '')}/gmail/v1/users/me${path}`);
    for (const [k, v] of Object.entries(opts.query ?? {})) {
      if (v === undefined) continue;
      for (const x of Array.isArray(v) ? v : [v]) u.searchParams.append(k, x);
    }
    return (await this.http.send(u.toString(), { method, headers: { authorization: `Bearer ${token}` }, json: opts.json })).json;
  }

  async profile(token: string): Promise<{ emailAddress: string; messagesTotal?: number }> {
    return shape(await this.call(token, 'GET', '/profile'), (o) => typeof o.emailAddress === 'string', 'the profile');
  }

  async listMessages(token: string, p: { q?: string; labelIds?: string[]; maxResults: number; pageToken?: string; includeSpamTrash?: boolean }): Promise<{ messages: { id: string; threadId: string }[]; nextPageToken?: string; resultSizeEstimate?: number }> {
    const r = shape<{ messages?: { id: string; threadId: string }[]; nextPageToken?: string; resultSizeEstimate?: number }>(
      await this.call(token, 'GET', '/messages', { query: { q: p.q, labelIds: p.labelIds, maxResults: String(p.maxResults), pageToken: p.pageToken, includeSpamTrash: p.includeSpamTrash ? 'true' : undefined } }),
      (o) => o.messages === undefined || Array.isArray(o.messages),
      'a message list',
    );
    return { messages: r.messages ?? [], nextPageToken: r.nextPageToken, resultSizeEstimate: r.resultSizeEstimate };
  }

  async getMessage(token: string, id: string, format: 'full' | 'metadata'): Promise<GmailMessage> {
    return shape(
      await this.call(token, 'GET', `/messages/${encodeURIComponent(id)}`, { query: { format, metadataHeaders: format === 'metadata' ? ['From', 'To', 'Cc', 'Subject', 'Date'] : undefined } }),
      (o) => typeof o.id === 'string' && typeof o.threadId === 'string',
      'a message',
    );
  }

  async send(token: string, rawMime: string, threadId?: string): Promise<GmailMessage> {
    return shape(
      await this.call(token, 'POST', '/messages/send', { json: { raw: Buffer.from(rawMime, 'utf8').toString('base64url'), ...(threadId ? { threadId } : {}) } }),
      (o) => typeof o.id === 'string',
      'a sent message',
    );
  }

  async createDraft(token: string, rawMime: string, threadId?: string): Promise<{ id: string; message: GmailMessage }> {
    return shape(
      await this.call(token, 'POST', '/drafts', { json: { message: { raw: Buffer.from(rawMime, 'utf8').toString('base64url'), ...(threadId ? { threadId } : {}) } } }),
      (o) => typeof o.id === 'string' && typeof o.message === 'object' && o.message !== null,
      'a draft',
    );
  }

  /** `messages.attachments.get`: an attachment's bytes (Gmail answers them base64url in `data`). */
  async getAttachment(token: string, messageId: string, attachmentId: string): Promise<Buffer> {
    const r = shape<{ data: string }>(
      await this.call(token, 'GET', `/messages/${encodeURIComponent(messageId)}/attachments/${encodeURIComponent(attachmentId)}`),
      (o) => typeof o.data === 'string',
      'an attachment',
    );
    return Buffer.from(r.data, 'base64url');
  }

  async listLabels(token: string): Promise<GmailLabel[]> {
    const r = shape<{ labels?: GmailLabel[] }>(await this.call(token, 'GET', '/labels'), (o) => o.labels === undefined || Array.isArray(o.labels), 'the labels');
    return r.labels ?? [];
  }

  async modify(token: string, id: string, addLabelIds: string[], removeLabelIds: string[]): Promise<GmailMessage> {
    return shape(await this.call(token, 'POST', `/messages/${encodeURIComponent(id)}/modify`, { json: { addLabelIds, removeLabelIds } }), (o) => typeof o.id === 'string', 'a modified message');
  }
}
