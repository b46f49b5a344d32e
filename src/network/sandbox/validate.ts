import { z } from 'zod';
import { MEDIA_TYPES } from '../../domain/messages.js';
import type { GraphMessage, KnownGraphErrorCode } from '../graph-api.js';

/*
 * How the sandbox network reads a send request: the structural checks the
 * Cloud API makes before it looks at templates or recipients. Failures carry
 * the network's code (100 for a malformed request, 131008 for a missing
 * required field, 131009 for a value out of range).
 */

export type ParsedSend =
  /** `to`: a phone number (digits), or a business-scoped user id when `byUserId` (the request's `recipient`). */
  | { ok: true; to: string; byUserId?: boolean; input: string; message: GraphMessage; callbackData?: string }
  | { ok: false; code: KnownGraphErrorCode; details: string };

const media = z
  .object({
    link: z.string().optional(),
    id: z.string().min(1).optional(),
    caption: z.string().max(1024).optional(),
    filename: z.string().optional(),
  })
  .loose();

const parameter = z.looseObject({ type: z.string() });
const component = z.looseObject({
  type: z.enum(['header', 'body', 'button']),
  sub_type: z.enum(['quick_reply', 'url', 'copy_code', 'flow']).optional(),
  index: z.union([z.number().int(), z.string().regex(/^\d+$/)]).optional(),
  parameters: z.array(parameter).default([]),
});

const base = z.looseObject({
  messaging_product: z.string().optional(),
  recipient_type: z.string().optional(),
  to: z.unknown().optional(),
  recipient: z.unknown().optional(),
  type: z.string().default('text'),
});

// Built once: a zod schema compiles its parser on first use, so one built per request costs that every time.
const textPayload = z.object({ body: z.string().min(1).max(4096), preview_url: z.boolean().optional() });
const templatePayload = z.object({
  name: z.string().min(1),
  language: z.object({ code: z.string().min(1), policy: z.literal('deterministic').optional() }),
  components: z.array(component).optional(),
});
const header = z.object({ type: z.literal('text'), text: z.string().max(60) }).optional();
const footer = z.object({ text: z.string().max(60) }).optional();
const interactiveBody = z.object({ text: z.string().min(1).max(1024) });
const interactivePayload = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('button'),
    header,
    body: interactiveBody,
    footer,
    action: z.object({
      buttons: z.array(z.object({ type: z.literal('reply'), reply: z.object({ id: z.string().min(1).max(256), title: z.string().min(1).max(20) }) })),
    }),
  }),
  z.object({
    type: z.literal('list'),
    header,
    body: interactiveBody.extend({ text: z.string().min(1).max(4096) }),
    footer,
    action: z.object({
      button: z.string().min(1).max(20),
      sections: z
        .array(z.object({ title: z.string().min(1).max(24).optional(), rows: z.array(z.object({ id: z.string().min(1).max(200), title: z.string().min(1).max(24), description: z.string().max(72).optional() })).min(1) }))
        .min(1)
        .max(10),
    }),
  }),
  z.object({
    type: z.literal('cta_url'),
    header,
    body: interactiveBody,
    footer,
    action: z.object({ name: z.literal('cta_url'), parameters: z.object({ display_text: z.string().min(1).max(20), url: z.string().min(1) }) }),
  }),
  z.object({ type: z.literal('location_request_message'), body: interactiveBody, action: z.object({ name: z.literal('send_location') }) }),
  z.object({ type: z.literal('request_contact_info'), body: interactiveBody, action: z.object({ name: z.literal('request_contact_info') }) }),
]);
const reactionPayload = z.object({ message_id: z.string().min(1).max(256), emoji: z.string().max(16) });
const locationPayload = z.object({
  latitude: z.coerce.number().min(-90).max(90),
  longitude: z.coerce.number().min(-180).max(180),
  name: z.string().max(1000).optional(),
  address: z.string().max(1000).optional(),
});
const typed = z.object({ type: z.string().max(32).optional() });
const contactCard = z.object({
  name: z.object({ formatted_name: z.string().min(1).max(1000), first_name: z.string().max(1000).optional(), last_name: z.string().max(1000).optional(), middle_name: z.string().max(1000).optional(), suffix: z.string().max(1000).optional(), prefix: z.string().max(1000).optional() }),
  addresses: z.array(typed.extend({ street: z.string().optional(), city: z.string().optional(), state: z.string().optional(), zip: z.string().optional(), country: z.string().optional(), country_code: z.string().optional() })).optional(),
  birthday: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'birthday is YYYY-MM-DD').optional(),
  emails: z.array(typed.extend({ email: z.string().optional() })).optional(),
  org: z.object({ company: z.string().optional(), department: z.string().optional(), title: z.string().optional() }).optional(),
  phones: z.array(typed.extend({ phone: z.string().optional(), wa_id: z.string().optional() })).optional(),
  urls: z.array(typed.extend({ url: z.string().optional() })).optional(),
});
const contactsPayload = z.array(contactCard).min(1).max(257);
const issue = (e: z.ZodError) => `${e.issues[0]?.path.join('.') ?? ''} ${e.issues[0]?.message ?? ''}`.trim();

function fail(code: KnownGraphErrorCode, details: string): ParsedSend {
  return { ok: false, code, details };
}

function linkOk(link: string): boolean {
  try {
    const u = new URL(link);
    return u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    return false;
  }
}

export function parseSendRequest(body: unknown): ParsedSend {
  const b = base.safeParse(body);
  if (!b.success) return fail(100, 'the request body must be a JSON object');
  const req = b.data;
  if (req.messaging_product !== 'whatsapp') return fail(100, 'The parameter messaging_product is required and must be "whatsapp"');
  if (req.recipient_type !== undefined && req.recipient_type !== 'individual') return fail(100, 'recipient_type must be individual');
  // A phone number goes in `to`, a business-scoped user id in `recipient`; given both, `to` wins.
  const byUserId = req.to === undefined && req.recipient !== undefined;
  const given = byUserId ? req.recipient : req.to;
  if (typeof given !== 'string' || given === '') return fail(131008, 'The parameter to (or recipient) is required');
  const to = byUserId ? given : given.replace(/^\+/, '');
  if (byUserId ? !/^[A-Z]{2}\.(?:ENT\.)?[0-9A-Za-z]{1,128}$/.test(to) : !/^[0-9]{7,15}$/.test(to)) {
    return fail(100, byUserId ? `Invalid parameter: recipient (${given}) is not a business-scoped user id` : `Invalid parameter: to (${given}) is not a phone number`);
  }
  const raw = body as Record<string, unknown>;
  const callback = raw.biz_opaque_callback_data;
  if (callback !== undefined && (typeof callback !== 'string' || callback.length > 512)) return fail(100, 'Invalid parameter: biz_opaque_callback_data must be a string of at most 512 characters');
  const parsed = parseMessage(raw, req.type, to, given);
  const out = parsed.ok && byUserId ? { ...parsed, byUserId: true } : parsed;
  return out.ok && typeof callback === 'string' ? { ...out, callbackData: callback } : out;
}

function parseMessage(raw: Record<string, unknown>, type: string, to: string, input: string): ParsedSend {
  const payload = raw[type];
  if (payload === undefined) return fail(131008, `The parameter ${type} is required for messages of type ${type}`);

  switch (type) {
    case 'text': {
      const t = textPayload.safeParse(payload);
      if (!t.success) return fail(100, 'text.body must be 1 to 4096 characters');
      return { ok: true, to, input, message: { type: 'text', text: t.data } };
    }
    case 'template': {
      const t = templatePayload.safeParse(payload);
      if (!t.success) return fail(100, `Invalid parameter: template (${t.error.issues[0]?.path.join('.') ?? ''} ${t.error.issues[0]?.message ?? ''})`);
      for (const c of t.data.components ?? []) {
        if (c.type === 'button' && (c.sub_type === undefined || c.index === undefined)) return fail(100, 'button components need sub_type and index');
        for (const p of c.parameters) {
          const kind = p.type;
          if (['image', 'video', 'document', 'audio'].includes(kind)) {
            const m = media.safeParse(p[kind]);
            if (!m.success || (m.data.link === undefined) === (m.data.id === undefined)) return fail(100, `Param ${kind} must contain either id or link`);
            if (m.data.link !== undefined && !linkOk(m.data.link)) return fail(131009, `${kind}.link is not a valid URL`);
          } else if (kind === 'text' && (typeof p.text !== 'string' || p.text === '')) {
            return fail(131008, 'text parameters need a non-empty text');
          }
        }
      }
      return { ok: true, to, input, message: { type: 'template', template: t.data as Extract<GraphMessage, { type: 'template' }>['template'] } };
    }
    case 'interactive': {
      const i = interactivePayload.safeParse(payload);
      if (!i.success) return fail(100, `Invalid parameter: interactive (${issue(i.error)})`);
      const it = i.data;
      if (it.type === 'button') {
        const buttons = it.action.buttons;
        if (buttons.length < 1 || buttons.length > 3) return fail(131009, 'interactive buttons: 1 to 3 are allowed');
        if (new Set(buttons.map((x) => x.reply.id)).size !== buttons.length) return fail(131009, 'interactive button ids must be unique');
        if (new Set(buttons.map((x) => x.reply.title)).size !== buttons.length) return fail(131009, 'interactive button titles must be unique');
      } else if (it.type === 'list') {
        const rows = it.action.sections.flatMap((x) => x.rows);
        if (rows.length > 10) return fail(131009, 'interactive list: at most 10 rows in all sections');
        if (it.action.sections.length > 1 && it.action.sections.some((x) => x.title === undefined)) return fail(131009, 'interactive list: every section needs a title when there are several');
        if (new Set(rows.map((r) => r.id)).size !== rows.length) return fail(131009, 'interactive list row ids must be unique');
      } else if (it.type === 'cta_url' && !linkOk(it.action.parameters.url)) {
        return fail(131009, 'interactive cta_url: parameters.url is not a valid URL');
      }
      return { ok: true, to, input, message: { type: 'interactive', interactive: it } as GraphMessage };
    }
    case 'reaction': {
      const r = reactionPayload.safeParse(payload);
      if (!r.success) return fail(100, `Invalid parameter: reaction (${issue(r.error)})`);
      // An empty emoji takes the reaction back; otherwise one emoji (with its modifiers and joiners).
      if (r.data.emoji !== '' && !/^\p{Extended_Pictographic}|^\p{Regional_Indicator}/u.test(r.data.emoji)) return fail(131009, 'reaction.emoji must be an emoji');
      return { ok: true, to, input, message: { type: 'reaction', reaction: r.data } };
    }
    case 'location': {
      const l = locationPayload.safeParse(payload);
      if (!l.success) return fail(100, `Invalid parameter: location (${issue(l.error)})`);
      return { ok: true, to, input, message: { type: 'location', location: l.data } };
    }
    case 'contacts': {
      const c = contactsPayload.safeParse(payload);
      if (!c.success) return fail(100, `Invalid parameter: contacts (${issue(c.error)})`);
      return { ok: true, to, input, message: { type: 'contacts', contacts: c.data } };
    }
    default: {
      if (!(MEDIA_TYPES as readonly string[]).includes(type)) return fail(100, `Invalid parameter: type ${type} is not supported`);
      const m = media.safeParse(payload);
      if (!m.success || (m.data.link === undefined) === (m.data.id === undefined)) return fail(100, `Param ${type} must contain either id or link`);
      if (m.data.link !== undefined && !linkOk(m.data.link)) return fail(131009, `${type}.link is not a valid URL`);
      if (m.data.caption !== undefined && (type === 'audio' || type === 'sticker')) return fail(100, `${type} messages take no caption`);
      return { ok: true, to, input, message: { type, [type]: m.data } as GraphMessage };
    }
  }
}
