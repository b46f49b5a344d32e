import { z } from 'zod';
import { AppError } from '../errors.js';
import { defineTool, type ToolDef } from '../mcp/index.js';
import { buildMime, readPayload } from './providers/mime.js';
import type { GmailMessage } from './providers/gmail.js';
import { sessionOf, type ToolSession } from './session.js';

/*
 * The email tools: Gmail through the connected mailbox's OAuth grant. Ids
 * are Gmail's message ids; queries use Gmail's search syntax.
 */

const address = z
  .string()
  .trim()
  .max(320)
  .regex(/^([^<>\r\n]*<)?[^@\s<>,;]+@[^@\s<>,;]+\.[^@\s<>,;]+>?$/, 'an email address like ada@example.com or "Ada Lovelace <ada@example.com>"');
const emailId = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, 'a Gmail message id, e.g. "18c2f0a1b2c3d4e5" (the `id` of list_emails or search_emails)').describe('The message id from list_emails or search_emails.');
const maxResults = z.number().int().min(1).max(50).default(10).describe('How many messages, 1 to 50 (default 10).');
const pageToken = z.string().max(200).optional().describe('`nextPageToken` of the previous call, for the next page.');

const summarySchema = z.object({
  id: z.string(),
  threadId: z.string(),
  from: z.string(),
  to: z.string(),
  subject: z.string(),
  date: z.string().describe('When Gmail received it, ISO 8601 UTC.'),
  snippet: z.string(),
  labels: z.array(z.string()),
  unread: z.boolean(),
});
const listSchema = z.object({ emails: z.array(summarySchema), nextPageToken: z.string().nullable(), resultSizeEstimate: z.number().int() });

function header(m: GmailMessage, name: string): string {
  return m.payload?.headers.find((h) => h.name.toLowerCase() === name.toLowerCase())?.value ?? '';
}

function summary(m: GmailMessage): z.input<typeof summarySchema> {
  return {
    id: m.id,
    threadId: m.threadId,
    from: header(m, 'From'),
    to: header(m, 'To'),
    subject: header(m, 'Subject'),
    date: new Date(Number(m.internalDate ?? 0)).toISOString(),
    snippet: m.snippet ?? '',
    labels: m.labelIds ?? [],
    unread: (m.labelIds ?? []).includes('UNREAD'),
  };
}

async function listWith(s: ToolSession, p: { q?: string; labelIds?: string[]; maxResults: number; pageToken?: string | undefined }): Promise<z.input<typeof listSchema>> {
  return s.withToken(async (token) => {
    const page = await s.gmail.listMessages(token, { ...p, pageToken: p.pageToken });
    const full = await Promise.all(page.messages.map((m) => s.gmail.getMessage(token, m.id, 'metadata')));
    return { emails: full.map(summary), nextPageToken: page.nextPageToken ?? null, resultSizeEstimate: page.resultSizeEstimate ?? full.length };
  });
}

/** Label names (any case) or ids to ids, from the mailbox's labels. */
const SYSTEM_LABELS = new Set(['INBOX', 'SENT', 'DRAFT', 'SPAM', 'TRASH', 'UNREAD', 'STARRED', 'IMPORTANT', 'CATEGORY_PERSONAL', 'CATEGORY_SOCIAL', 'CATEGORY_PROMOTIONS', 'CATEGORY_UPDATES', 'CATEGORY_FORUMS']);

async function labelIds(s: ToolSession, token: string, names: string[]): Promise<string[]> {
  // System label ids are the same in every mailbox: no lookup needed.
  if (names.every((n) => SYSTEM_LABELS.has(n.toUpperCase()))) return names.map((n) => n.toUpperCase());
  const labels = await s.gmail.listLabels(token);
  return names.map((n) => {
    const l = labels.find((x) => x.id === n || x.name.toLowerCase() === n.toLowerCase());
    if (!l) throw new AppError(400, 'unknown_label', `no label named "${n}" in this mailbox; call list_labels for the labels (system ones: INBOX, UNREAD, STARRED, IMPORTANT, SPAM, TRASH)`);
    return l.id;
  });
}

const MAX_BODY = 20_000;
const messageSchema = summarySchema.extend({
  cc: z.string(),
  messageIdHeader: z.string().describe('The RFC 5322 Message-ID header.'),
  text: z.string().describe(`The plain-text body (from the HTML part when there is no plain one), at most ${MAX_BODY} characters.`),
  truncated: z.boolean(),
  attachments: z.array(z.object({ filename: z.string(), mimeType: z.string(), size: z.number().int(), attachmentId: z.string() })),
});

/** The largest attachment get_attachment returns (its base64 is a third larger in the answer). */
export const MAX_ATTACHMENT_BYTES = 1024 * 1024;
const attachmentSchema = z.object({
  filename: z.string(),
  mimeType: z.string(),
  size: z.number().int().describe('Bytes.'),
  data: z.string().describe('The content, base64.'),
  text: z.string().nullable().describe(`For text attachments (text/*, JSON, XML, CSV), the content as UTF-8 text, at most ${MAX_BODY} characters; otherwise null.`),
});

const sentSchema = z.object({ id: z.string(), threadId: z.string(), labels: z.array(z.string()) });

export function emailTools(): ToolDef[] {
  return [
    defineTool({
      name: 'list_emails',
      title: 'List emails',
      description:
        'List the newest emails in one mailbox folder (label), newest first: sender, recipients, subject, date, a snippet, labels and whether unread. ' +
        'Default folder is INBOX; set unreadOnly to see only unread mail. Use get_email with an id to read the whole message, search_emails to find specific mail. ' +
        'Ask for the next page with nextPageToken.',
      scopes: [],
      input: z
        .object({
          label: z.string().trim().min(1).max(100).default('INBOX').describe('Folder/label name or id: INBOX (default), SENT, DRAFT, STARRED, IMPORTANT, SPAM, TRASH, or a user label from list_labels.'),
          unreadOnly: z.boolean().default(false).describe('Only unread messages.'),
          maxResults,
          pageToken,
        })
        .strict(),
      output: listSchema,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
      run: async (ctx, a) => {
        const s = sessionOf(ctx);
        const ids = await s.withToken((t) => labelIds(s, t, [a.label, ...(a.unreadOnly ? ['UNREAD'] : [])]));
        return listWith(s, { labelIds: ids, maxResults: a.maxResults, pageToken: a.pageToken });
      },
    }),
    defineTool({
      name: 'search_emails',
      title: 'Search emails',
      description:
        'Find emails with Gmail search syntax, newest first. Operators: from:ada@example.com, to:, subject:refund, is:unread, is:starred, has:attachment, label:receipts, in:sent, ' +
        'after:2026/01/31, before:2026/02/28, newer_than:7d, and plain words (searched in subject, body and addresses); prefix - to exclude. Spam and trash are left out unless the query says in:spam / in:trash. ' +
        'Returns the same summaries as list_emails; read one with get_email.',
      scopes: [],
      input: z.object({ query: z.string().trim().min(1).max(500).describe('A Gmail search query, e.g. "from:ada@example.com is:unread newer_than:30d".'), maxResults, pageToken }).strict(),
      output: listSchema,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
      run: (ctx, a) => listWith(sessionOf(ctx), { q: a.query, maxResults: a.maxResults, pageToken: a.pageToken }),
    }),
    defineTool({
      name: 'get_email',
      title: 'Read an email',
      description:
        'Read one email in full: headers, the plain-text body (HTML converted to text when there is no plain part), and the list of attachments (name, type, size; their content is not returned). ' +
        `Bodies longer than ${MAX_BODY} characters are cut (truncated: true). Reading does not mark the email as read; use modify_email with markRead for that.`,
      scopes: [],
      input: z.object({ emailId }).strict(),
      output: messageSchema,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
      run: async (ctx, a) => {
        const s = sessionOf(ctx);
        const m = await s.withToken((t) => s.gmail.getMessage(t, a.emailId, 'full'));
        const body = m.payload ? readPayload(m.payload) : { text: '', html: null, attachments: [] };
        return {
          ...summary(m),
          cc: header(m, 'Cc'),
          messageIdHeader: header(m, 'Message-ID'),
          text: body.text.slice(0, MAX_BODY),
          truncated: body.text.length > MAX_BODY,
          attachments: body.attachments.map(({ filename, mimeType, size, attachmentId }) => ({ filename, mimeType, size, attachmentId })),
        };
      },
    }),
    defineTool({
      name: 'get_attachment',
      title: 'Read an attachment',
      description:
        `Fetch one attachment of an email, by the attachmentId get_email lists: its name, type, size and content (base64; text attachments also as text). Up to ${MAX_ATTACHMENT_BYTES / 1024 / 1024} MiB; larger ones are refused (attachment_too_large).`,
      scopes: [],
      input: z.object({ emailId, attachmentId: z.string().regex(/^[A-Za-z0-9_-]{1,1024}$/, 'the attachmentId from get_email').describe('The attachmentId from get_email.') }).strict(),
      output: attachmentSchema,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
      run: async (ctx, a) => {
        const s = sessionOf(ctx);
        return s.withToken(async (t) => {
          const m = await s.gmail.getMessage(t, a.emailId, 'full');
          // Only what the message lists: an id from another message, or made up, is not fetched.
          const listed = (m.payload ? readPayload(m.payload).attachments : []).find((x) => x.attachmentId === a.attachmentId);
          if (listed === undefined) throw new AppError(404, 'not_found', 'that email lists no such attachment; get_email lists its attachments with their attachmentId');
          if (listed.size > MAX_ATTACHMENT_BYTES) throw new AppError(413, 'attachment_too_large', `the attachment is ${listed.size} bytes; get_attachment returns up to ${MAX_ATTACHMENT_BYTES}`);
          const bytes = await s.gmail.getAttachment(t, a.emailId, a.attachmentId);
          if (bytes.length > MAX_ATTACHMENT_BYTES) throw new AppError(413, 'attachment_too_large', `the attachment is ${bytes.length} bytes; get_attachment returns up to ${MAX_ATTACHMENT_BYTES}`);
          const textual = /^text\/|^application\/(json|xml|csv)|\+(json|xml)$/.test(listed.mimeType);
          return { filename: listed.filename, mimeType: listed.mimeType, size: bytes.length, data: bytes.toString('base64'), text: textual ? bytes.toString('utf8').slice(0, MAX_BODY) : null };
        });
      },
    }),
    defineTool({
      name: 'send_email',
      title: 'Send an email',
      description:
        'Send a new email from the connected mailbox now. It reaches real people and cannot be unsent: confirm recipients and wording with the user first when in doubt, or use create_draft to let them review. ' +
        'To answer an email, use reply_email instead (it keeps the conversation thread). Each call sends another email. Returns the sent message id and thread id.',
      scopes: [],
      input: z
        .object({
          to: z.array(address).min(1).max(50).describe('Recipients.'),
          cc: z.array(address).max(50).optional().describe('Copy recipients.'),
          bcc: z.array(address).max(50).optional().describe('Blind-copy recipients (not shown to the others).'),
          subject: z.string().trim().min(1).max(500),
          body: z.string().min(1).max(100_000).describe('The message as plain text.'),
          html: z.string().max(200_000).optional().describe('Optional HTML version of the same message.'),
        })
        .strict(),
      output: sentSchema,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      run: async (ctx, a) => {
        const s = sessionOf(ctx);
        const raw = buildMime({ to: a.to, cc: a.cc, bcc: a.bcc, subject: a.subject, text: a.body, html: a.html });
        const m = await s.withToken((t) => s.gmail.send(t, raw));
        return { id: m.id, threadId: m.threadId, labels: m.labelIds ?? [] };
      },
    }),
    defineTool({
      name: 'reply_email',
      title: 'Reply to an email',
      description:
        'Reply to an email in its thread: addressed to the sender (its Reply-To when set), subject "Re: …", threaded with In-Reply-To/References so mail clients group it. ' +
        'replyAll also copies the other recipients (never the mailbox itself). Sends at once and reaches real people; each call sends another reply.',
      scopes: [],
      input: z
        .object({
          emailId,
          body: z.string().min(1).max(100_000).describe('The reply as plain text (the quoted original is not added).'),
          replyAll: z.boolean().default(false).describe('Also reply to everyone in To and Cc of the original.'),
          html: z.string().max(200_000).optional().describe('Optional HTML version of the reply.'),
        })
        .strict(),
      output: sentSchema,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      run: async (ctx, a) => {
        const s = sessionOf(ctx);
        return s.withToken(async (t) => {
          const [orig, me] = await Promise.all([s.gmail.getMessage(t, a.emailId, 'full'), s.gmail.profile(t)]);
          const addrs = (v: string) => v.split(',').map((x) => x.trim()).filter((x) => x !== '');
          const self = (x: string) => x.toLowerCase().includes(me.emailAddress.toLowerCase());
          const to = addrs(header(orig, 'Reply-To') || header(orig, 'From')).filter((x) => !self(x));
          const others = a.replyAll ? [...addrs(header(orig, 'To')), ...addrs(header(orig, 'Cc'))].filter((x) => !self(x) && !to.includes(x)) : [];
          if (to.length === 0) to.push(...addrs(header(orig, 'To')));
          const subject = header(orig, 'Subject');
          const msgId = header(orig, 'Message-ID');
          const raw = buildMime({
            to,
            cc: others,
            subject: /^re:/i.test(subject) ? subject : `Re: ${subject}`,
            text: a.body,
            html: a.html,
            inReplyTo: msgId || undefined,
            references: [header(orig, 'References'), msgId].filter((x) => x !== '').join(' ') || undefined,
          });
          const m = await s.gmail.send(t, raw, orig.threadId);
          return { id: m.id, threadId: m.threadId, labels: m.labelIds ?? [] };
        });
      },
    }),
    defineTool({
      name: 'create_draft',
      title: 'Create a draft',
      description:
        'Save an email as a draft in the mailbox without sending it, so the user can review and send it themselves. With replyToEmailId the draft is a threaded reply to that email ' +
        '(recipients and "Re:" subject filled in when not given). Each call makes another draft.',
      scopes: [],
      input: z
        .object({
          to: z.array(address).max(50).optional().describe('Recipients (required unless replyToEmailId is given).'),
          cc: z.array(address).max(50).optional(),
          bcc: z.array(address).max(50).optional(),
          subject: z.string().trim().min(1).max(500).optional().describe('Subject (required unless replyToEmailId is given).'),
          body: z.string().min(1).max(100_000).describe('The message as plain text.'),
          replyToEmailId: emailId.optional().describe('Make the draft a reply to this message id.'),
        })
        .strict()
        .refine((v) => v.replyToEmailId !== undefined || ((v.to?.length ?? 0) > 0 && v.subject !== undefined), { message: 'give to and subject, or replyToEmailId', path: ['to'] }),
      output: z.object({ draftId: z.string(), messageId: z.string(), threadId: z.string() }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      run: async (ctx, a) => {
        const s = sessionOf(ctx);
        return s.withToken(async (t) => {
          let threadId: string | undefined;
          let to = a.to ?? [];
          let subject = a.subject ?? '';
          let inReplyTo: string | undefined;
          let references: string | undefined;
          if (a.replyToEmailId !== undefined) {
            const orig = await s.gmail.getMessage(t, a.replyToEmailId, 'full');
            threadId = orig.threadId;
            if (to.length === 0) to = [header(orig, 'Reply-To') || header(orig, 'From')];
            if (subject === '') subject = /^re:/i.test(header(orig, 'Subject')) ? header(orig, 'Subject') : `Re: ${header(orig, 'Subject')}`;
            inReplyTo = header(orig, 'Message-ID') || undefined;
            references = [header(orig, 'References'), header(orig, 'Message-ID')].filter((x) => x !== '').join(' ') || undefined;
          }
          const d = await s.gmail.createDraft(t, buildMime({ to, cc: a.cc, bcc: a.bcc, subject, text: a.body, inReplyTo, references }), threadId);
          return { draftId: d.id, messageId: d.message.id, threadId: d.message.threadId };
        });
      },
    }),
    defineTool({
      name: 'list_labels',
      title: 'List labels',
      description: 'List the mailbox\'s labels (folders): system labels such as INBOX, SENT, UNREAD, STARRED, SPAM, TRASH and the user\'s own, with message and unread counts. Use the names with list_emails and modify_email.',
      scopes: [],
      input: z.object({}).strict(),
      output: z.object({ labels: z.array(z.object({ id: z.string(), name: z.string(), type: z.enum(['system', 'user']), messagesTotal: z.number().int().nullable(), messagesUnread: z.number().int().nullable() })) }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
      run: async (ctx) => {
        const s = sessionOf(ctx);
        const labels = await s.withToken((t) => s.gmail.listLabels(t));
        return { labels: labels.map((l) => ({ id: l.id, name: l.name, type: l.type === 'user' ? ('user' as const) : ('system' as const), messagesTotal: l.messagesTotal ?? null, messagesUnread: l.messagesUnread ?? null })) };
      },
    }),
    defineTool({
      name: 'modify_email',
      title: 'Label, archive or mark an email',
      description:
        'Change an email\'s labels: markRead true/false, star true/false, archive (takes it out of the INBOX), trash (moves it to TRASH, recoverable for 30 days), or add/remove any labels by name. ' +
        'Returns the labels the email has afterwards. Setting the same labels again changes nothing.',
      scopes: [],
      input: z
        .object({
          emailId,
          markRead: z.boolean().optional().describe('true: mark read; false: mark unread.'),
          star: z.boolean().optional().describe('true: star; false: unstar.'),
          archive: z.boolean().optional().describe('true: remove from INBOX; false: move back to INBOX.'),
          trash: z.boolean().optional().describe('true: move to TRASH.'),
          addLabels: z.array(z.string().trim().min(1).max(100)).max(20).optional().describe('Label names or ids to add (see list_labels).'),
          removeLabels: z.array(z.string().trim().min(1).max(100)).max(20).optional().describe('Label names or ids to remove.'),
        })
        .strict()
        .refine((v) => Object.keys(v).length > 1, { message: 'give at least one change besides emailId', path: [] }),
      output: z.object({ id: z.string(), threadId: z.string(), labels: z.array(z.string()), unread: z.boolean() }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
      run: async (ctx, a) => {
        const s = sessionOf(ctx);
        return s.withToken(async (t) => {
          const add = new Set(await labelIds(s, t, a.addLabels ?? []));
          const remove = new Set(await labelIds(s, t, a.removeLabels ?? []));
          const flag = (v: boolean | undefined, label: string, invert = false) => {
            if (v === undefined) return;
            (v !== invert ? add : remove).add(label);
          };
          flag(a.markRead, 'UNREAD', true);
          flag(a.star, 'STARRED');
          flag(a.archive, 'INBOX', true);
          if (a.trash === true) add.add('TRASH');
          if (a.trash === false) remove.add('TRASH');
          for (const l of add) if (remove.has(l)) throw new AppError(400, 'validation_failed', `label ${l} is both added and removed`);
          const m = await s.gmail.modify(t, a.emailId, [...add], [...remove]);
          return { id: m.id, threadId: m.threadId, labels: m.labelIds ?? [], unread: (m.labelIds ?? []).includes('UNREAD') };
        });
      },
    }),
  ];
}
