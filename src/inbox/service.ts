import { requireScope } from '../app/principal.js';
import { AppError, badRequest, notFound } from '../errors.js';
import type { Clock } from '../clock.js';
import { CONVERSATION_VIEWS, unreadCount, type ConversationCountQuery, type ConversationKey, type ConversationRecord, type ConversationSort, type ConversationStatus, type ConversationView, type SlaFilter } from '../domain/conversation.js';
import { changedContact, contactIdentityView, type Contact, type ContactChange, type Principal } from '../domain/types.js';
import { CONTACT_ID_PATTERN, contactAddressOf, isWebChatContactId } from '../domain/contact-id.js';
import { customerServiceWindow } from '../domain/service-window.js';
import { timelineActorOf, type ConversationCommand, type HandoverReply, type NoteReply } from '../actors/index.js';
import type { ConversationClient } from '../conversations/index.js';
import { publicMessage, type TimelineActor } from '../domain/messages.js';
import type { GraphTemplateComponent } from '../domain/templates.js';
import { buttonsMessage, contactsMessage, DEFAULT_PHONE_REQUEST_TEXT, locationMessage, mediaMessage, reactionMessage, requestContactInfoMessage, textMessage, type MessagingService, type OutboundSend } from '../messaging/index.js';
import type { ContactRepo, UserRepo } from '../store/core/port.js';
import type { ConversationIndexRepo } from '../store/conversations/port.js';
import type { SessionMessageRepo } from '../store/session-messages/port.js';
import type { SearchIndex } from '../store/search/port.js';
import { searchTerms, snippet } from '../store/search/query.js';
import type { AgentTemplate, ConversationSummary, ReplyMessage } from './schemas.js';
import type { ContactChanged, LabelService } from './labels.js';
import { unstorableText } from '../storable-text.js';

export interface InboxServiceDeps {
  conversations: ConversationIndexRepo;
  contacts: ContactRepo;
  users: UserRepo;
  messages: SessionMessageRepo;
  search: SearchIndex;
  messaging: MessagingService;
  /** The one way to the contacts' conversation actors. */
  conversationClient: ConversationClient;
  labels: LabelService;
  /** The organization's teams: a team filter and a queue to a team name one. */
  teams?: { find(organizationId: string, id: string): Promise<{ id: string } | null>; teamsOf(organizationId: string, userId: string): Promise<string[]> };
  clock: Clock;
  /** Tells every agent's socket that a contact changed (renamed, attributes), once stored. */
  contactChanged: ContactChanged;
}

export type ConversationAction = 'take' | 'hand_back' | 'resolve' | 'transfer' | 'queue';

const DETAIL_MESSAGES = 50;
/** At most this many custom attributes per contact. */
export const MAX_CONTACT_ATTRIBUTES = 50;

/**
 * The live inbox's operations, behind both the WebSocket and its REST twins
 * (and the MCP tools): list and read conversations, and act on them through
 * the contact's conversation actor, which serializes every change — so of
 * racing takes, on any nodes, exactly one wins. Checks the caller's scopes
 * itself, like the other services.
 *
 * Who may act: `inbox:write` for every action; replying, sending a template,
 * transferring, handing back and resolving also need to hold the
 * conversation, unless the caller is an admin. The holder check runs inside
 * the actor, on its current state.
 */
export class InboxService {
  constructor(private readonly d: InboxServiceDeps) {}

  // ------------------------------------------------------------------ reading

  async list(principal: Principal, q: { status?: ConversationStatus; assigneeId?: string; page: number; limit: number }) {
    requireScope(principal, 'inbox:read');
    const page = await this.d.conversations.list({ organizationId: principal.organizationId, offset: (q.page - 1) * q.limit, limit: q.limit, ...(q.status ? { status: q.status } : {}), ...(q.assigneeId ? { assigneeId: q.assigneeId } : {}) });
    return { conversations: await this.withUnread(principal, page.conversations, await this.summaries(principal.organizationId, page.conversations)), total: page.total };
  }

  /**
   * One page of a view, by cursor: `nextCursor` names where the next page
   * starts (null after the last), opaque to clients and bound to the view,
   * sort and filters it was made for. Agents see every view, as they see
   * every conversation in the inbox.
   */
  async listView(principal: Principal, q: ConversationViewInput): Promise<{ conversations: ConversationSummary[]; nextCursor: string | null }> {
    requireScope(principal, 'inbox:read');
    const view = q.view ?? 'all';
    const sort = q.sort ?? 'activity';
    const filters = await this.filters(principal, q);
    if (filters === null) return { conversations: [], nextCursor: null };
    const scope = cursorScope(view, sort, q);
    const after = q.cursor === undefined ? undefined : readCursor(q.cursor, scope);
    const page = await this.d.conversations.listView({ ...filters, view, sort, limit: q.limit, ...(after ? { after } : {}) });
    const conversations = await this.withUnread(principal, page.conversations, await this.summaries(principal.organizationId, page.conversations));
    return { conversations, nextCursor: page.next === null ? null : writeCursor(page.next, scope) };
  }

  /** How many conversations each view holds for the caller, with the same filters as a list. */
  async counts(principal: Principal, q: Omit<ConversationViewInput, 'view' | 'sort' | 'cursor' | 'limit'>) {
    requireScope(principal, 'inbox:read');
    const filters = await this.filters(principal, q);
    if (filters === null) return Object.fromEntries(CONVERSATION_VIEWS.map((v) => [v, 0])) as Record<ConversationView, number>;
    return this.d.conversations.counts(filters);
  }

  /** A list's filters for the store; null when they can match nothing (an unknown channel or contact). */
  private async filters(principal: Principal, q: { channelId?: string; contact?: string; assigneeId?: string; label?: string; sla?: SlaFilter; team?: string }): Promise<ConversationCountQuery | null> {
    const f: ConversationCountQuery = { organizationId: principal.organizationId, userId: principal.userId };
    if (q.assigneeId !== undefined) f.assigneeId = q.assigneeId;
    if (q.sla !== undefined) f.sla = q.sla;
    if (q.team !== undefined) {
      if (this.d.teams === undefined) return null;
      if (q.team === 'mine') f.teamIds = await this.d.teams.teamsOf(principal.organizationId, principal.userId);
      else if ((await this.d.teams.find(principal.organizationId, q.team)) === null) return null;
      else f.teamIds = [q.team];
    }
    if (q.label !== undefined) {
      const label = await this.d.labels.resolve(principal.organizationId, q.label);
      if (label === null) return null;
      f.labelId = label.id;
    }
    if (q.channelId !== undefined) {
      const suffix = await this.d.messaging.channelConversationSuffix(principal.organizationId, q.channelId);
      if (suffix === null) return null;
      f.phoneNumberId = suffix;
    }
    if (q.contact !== undefined) {
      const byId = await this.d.contacts.getById(principal.organizationId, q.contact);
      f.audienceExternalId = byId?.audienceExternalId ?? q.contact;
    }
    return f;
  }

  /** Marks the conversation's current session as read up to now, for the caller. */
  async markSeen(principal: Principal, audienceExternalId: string): Promise<ConversationSummary> {
    requireScope(principal, 'inbox:read');
    const record = await this.d.conversations.get(principal.organizationId, audienceExternalId);
    if (record === null) throw notFound('conversation');
    if (record.sessionId !== null) {
      await this.d.conversations.markSeen(principal.organizationId, principal.userId, audienceExternalId, { sessionId: record.sessionId, inboundSeen: record.inboundCount ?? 0 });
    }
    const [summary] = await this.summaries(principal.organizationId, [record]);
    return { ...summary!, unreadCount: 0 };
  }

  private async withUnread(principal: Principal, records: ConversationRecord[], summaries: ConversationSummary[]): Promise<ConversationSummary[]> {
    const seen = await this.d.conversations.seen(principal.organizationId, principal.userId, records.map((r) => r.audienceExternalId));
    return summaries.map((s, i) => ({ ...s, unreadCount: unreadCount(records[i]!, seen.get(records[i]!.audienceExternalId)) }));
  }

  async get(principal: Principal, audienceExternalId: string) {
    requireScope(principal, 'inbox:read');
    // By the canonical id, or by another id of the same person (their BSUID form, their phone form).
    const record =
      (await this.d.conversations.get(principal.organizationId, audienceExternalId)) ??
      (await this.d.conversations.get(principal.organizationId, await this.d.contacts.resolve(principal.organizationId, audienceExternalId)));
    if (record === null) throw notFound('conversation');
    const [summary] = await this.withUnread(principal, [record], await this.summaries(principal.organizationId, [record]));
    // The agents' timeline: messages, system entries and private notes, in the order they happened.
    const all = record.sessionId === null ? [] : ((await this.d.messages.listSession(principal.organizationId, record.sessionId, { notes: true })) ?? []);
    return { ...summary!, messages: all.slice(-DETAIL_MESSAGES).map(publicMessage) };
  }

  /** Throws 404 unless the conversation is one of the caller's organization (for what names one without acting on it, like typing). */
  async requireConversation(principal: Principal, audienceExternalId: string): Promise<void> {
    if ((await this.d.conversations.get(principal.organizationId, audienceExternalId)) === null) throw notFound('conversation');
  }

  /** A conversation as the inbox shows it, for events that name one. */
  async summary(organizationId: string, audienceExternalId: string): Promise<ConversationSummary | null> {
    const record = await this.d.conversations.get(organizationId, audienceExternalId);
    return record === null ? null : (await this.summaries(organizationId, [record]))[0]!;
  }

  private async summaries(organizationId: string, records: ConversationRecord[]): Promise<ConversationSummary[]> {
    const now = new Date(this.d.clock.now());
    const channels = new Map<string, Promise<string | null>>();
    const channelOf = (aeid: string) => {
      const pnid = aeid.slice(aeid.indexOf(':') + 1);
      let c = channels.get(pnid);
      if (c === undefined) {
        c = this.d.messaging.conversationChannel(organizationId, aeid).then(
          (r) => r.channel.id,
          () => null,
        );
        channels.set(pnid, c);
      }
      return c;
    };
    const labels = await this.d.labels.labelsOf(organizationId, 'conversation', records.map((r) => r.audienceExternalId));
    return Promise.all(
      records.map(async (r) => {
        const [contact, channelId] = await Promise.all([this.d.contacts.get(organizationId, r.audienceExternalId), channelOf(r.audienceExternalId)]);
        return {
          id: r.audienceExternalId,
          audienceExternalId: r.audienceExternalId,
          contactId: r.contactId,
          contactName: contact?.name ?? null,
          ...identityOf(contact ?? { audienceExternalId: r.audienceExternalId }),
          channelId,
          status: r.status,
          assigneeId: r.assigneeId,
          queuedAt: r.queuedAt,
          assignedAt: r.assignedAt,
          sessionId: r.sessionId,
          sessionStatus: r.sessionStatus,
          labels: labels.get(r.audienceExternalId) ?? [],
          teamId: r.teamId ?? null,
          window: windowView(r.lastInboundAt, now),
          lastInboundAt: r.lastInboundAt,
          sla: r.sla ?? null,
          updatedAt: r.updatedAt,
        };
      }),
    );
  }

  // ------------------------------------------------------------------ acting

  async take(principal: Principal, audienceExternalId: string, idempotencyKey?: string) {
    requireScope(principal, 'inbox:write');
    const contact = await this.contact(principal, audienceExternalId);
    const r = await this.ask(principal, contact.audienceExternalId, 'take', { kind: 'handover.take', contactId: contact.id, agentId: principal.userId }, idempotencyKey);
    return this.after(principal, audienceExternalId, r);
  }

  /**
   * Moves a conversation that is with the bot into the live-chat queue: the
   * same actor command and event as `POST /v1/handover`, requested by the
   * caller (an agent, or a script with its key).
   */
  async queue(principal: Principal, audienceExternalId: string, idempotencyKey?: string, teamId?: string) {
    requireScope(principal, 'inbox:write');
    const contact = await this.contact(principal, audienceExternalId);
    if (teamId !== undefined && (this.d.teams === undefined || (await this.d.teams.find(principal.organizationId, teamId)) === null)) {
      throw new AppError(422, 'unknown_team', 'no team with this id in the organization', { teamId });
    }
    const command: ConversationCommand = { kind: 'handover.request', contactId: contact.id, actor: timelineActorOf(principal), ...(teamId === undefined ? {} : { teamId }) };
    const r = await this.ask(principal, contact.audienceExternalId, 'queue', command, idempotencyKey === undefined || teamId === undefined ? idempotencyKey : `${teamId}:${idempotencyKey}`);
    return this.after(principal, audienceExternalId, r);
  }

  /**
   * A private note on the conversation's latest session: in the agents'
   * timeline, on the socket and to webhooks as `conversation.note_added`;
   * never sent to the customer, never in the customer-facing history.
   */
  async addNote(principal: Principal, audienceExternalId: string, text: string, idempotencyKey?: string) {
    requireScope(principal, 'inbox:write');
    const contact = await this.contact(principal, audienceExternalId);
    const r = (await this.d.conversationClient.askPlaced(principal.organizationId, contact.audienceExternalId, { kind: 'note.add', contactId: contact.id, agentId: principal.userId, text }, idempotencyKey === undefined ? {} : { idempotencyKey: `inbox.note:${principal.userId}:${idempotencyKey}` })) as NoteReply;
    if (!r.success || r.messageId === undefined) throw new AppError(409, 'no_conversation', 'the contact has had no conversation yet: there is nothing to note on');
    const note = await this.d.messages.get(principal.organizationId, r.messageId);
    if (note === null) throw new AppError(503, 'not_ready', 'the note is recorded but not stored yet; retry with the same Idempotency-Key', undefined, { retryAfterSeconds: 1 });
    return publicMessage(note);
  }

  /**
   * A ticket made for a contact goes into the contact's timeline (latest
   * session) as a system entry, once per ticket (its id is the command's
   * key). A contact with no conversation yet has no timeline to show it in.
   */
  async ticketCreated(organizationId: string, ticket: { id: string; subject: string; audienceExternalId: string }, actor: TimelineActor): Promise<void> {
    await this.d.conversationClient.ask(organizationId, ticket.audienceExternalId, { kind: 'timeline.ticket', ticketId: ticket.id, subject: ticket.subject, actor }, { idempotencyKey: `timeline.ticket:${ticket.id}` });
  }

  async transfer(principal: Principal, audienceExternalId: string, agentId: string, idempotencyKey?: string) {
    requireScope(principal, 'inbox:write');
    const contact = await this.contact(principal, audienceExternalId);
    const agent = await this.d.users.get(principal.organizationId, agentId);
    if (agent === null) throw new AppError(422, 'unknown_agent', 'no user with this id in the organization', { agentId });
    const r = await this.ask(principal, contact.audienceExternalId, 'transfer', { kind: 'handover.transfer', contactId: contact.id, agentId, by: principal.userId, ...this.onlyFrom(principal) }, idempotencyKey);
    return this.after(principal, audienceExternalId, r);
  }

  async handBack(principal: Principal, audienceExternalId: string, idempotencyKey?: string) {
    requireScope(principal, 'inbox:write');
    const contact = await this.contact(principal, audienceExternalId);
    const r = await this.ask(principal, contact.audienceExternalId, 'hand_back', { kind: 'handover.release', contactId: contact.id, by: principal.userId, ...this.onlyFrom(principal) }, idempotencyKey);
    return this.after(principal, audienceExternalId, r);
  }

  async resolve(principal: Principal, audienceExternalId: string, idempotencyKey?: string) {
    requireScope(principal, 'inbox:write');
    const contact = await this.contact(principal, audienceExternalId);
    const r = await this.ask(principal, contact.audienceExternalId, 'resolve', { kind: 'handover.resolve', contactId: contact.id, by: principal.userId, ...this.onlyFrom(principal) }, idempotencyKey);
    return this.after(principal, audienceExternalId, r);
  }

  async reply(principal: Principal, audienceExternalId: string, message: ReplyMessage, idempotencyKey?: string) {
    requireScope(principal, 'inbox:write');
    await this.contact(principal, audienceExternalId);
    const send = await this.replySend(principal, audienceExternalId, message);
    return this.d.messaging.sendAsAgent(principal, audienceExternalId, { kind: 'freeform', send }, this.sendOpts(principal, 'reply', idempotencyKey));
  }

  /**
   * Asks a customer who hides their number to share it, with Meta's
   * contact-information request (a free-form message: inside the 24-hour
   * window). The number they share is linked to their contact.
   */
  async requestPhone(principal: Principal, audienceExternalId: string, text: string | undefined, idempotencyKey?: string) {
    requireScope(principal, 'inbox:write');
    const contact = await this.contact(principal, audienceExternalId);
    if (isWebChatContactId(contact.audienceExternalId)) throw new AppError(422, 'not_a_chat_channel', 'a web chat visitor has no WhatsApp number to share');
    const phone = contactIdentityView(contact).phone;
    if (phone !== null) throw new AppError(409, 'phone_already_known', 'the customer has shared their number already', { phone });
    const send = requestContactInfoMessage(text ?? DEFAULT_PHONE_REQUEST_TEXT);
    return this.d.messaging.sendAsAgent(principal, contact.audienceExternalId, { kind: 'freeform', send }, this.sendOpts(principal, 'request_phone', idempotencyKey));
  }

  private async replySend(principal: Principal, audienceExternalId: string, message: ReplyMessage): Promise<OutboundSend> {
    switch (message.type) {
      case 'text':
        return textMessage({ channelId: '', to: '', text: { body: message.text, ...(message.previewUrl === undefined ? {} : { previewUrl: message.previewUrl }) } });
      case 'buttons':
        return buttonsMessage({ channelId: '', to: '', interactive: message.interactive });
      case 'media':
        return mediaMessage({ channelId: '', to: '', media: message.media });
      case 'location':
        return locationMessage(message.location);
      case 'contacts':
        return contactsMessage(message.contacts);
      case 'reaction': {
        // Only a message of this conversation: the network would take any id, and the thread could not show it.
        const target = await this.d.messages.getByNetworkId(principal.organizationId, message.reaction.messageId);
        if (target === null || target.audienceExternalId !== audienceExternalId || target.direction === 'internal') {
          throw new AppError(422, 'no_such_message', 'the reaction names no message of this conversation (give its network id, wamid…)', { messageId: message.reaction.messageId });
        }
        return reactionMessage(message.reaction);
      }
    }
  }

  async sendTemplate(principal: Principal, audienceExternalId: string, template: AgentTemplate, idempotencyKey?: string) {
    requireScope(principal, 'inbox:write');
    await this.contact(principal, audienceExternalId);
    const components = template.components as GraphTemplateComponent[] | undefined;
    return this.d.messaging.sendAsAgent(
      principal,
      audienceExternalId,
      { kind: 'template', name: template.name, language: template.language.code, ...(components ? { components } : {}) },
      this.sendOpts(principal, 'template', idempotencyKey),
    );
  }

  // ------------------------------------------------------------------ contacts

  async listContacts(principal: Principal, q: { q?: string; page: number; limit: number }) {
    requireScope(principal, 'contacts:read');
    const needle = q.q?.toLowerCase();
    const digits = needle?.replace(/[^0-9]/g, '');
    const all = (await this.d.contacts.list(principal.organizationId))
      .filter(
        (c) =>
          needle === undefined ||
          (c.name ?? '').toLowerCase().includes(needle) ||
          (c.username ?? '').toLowerCase().includes(needle.replace(/^@/, '')) ||
          (c.userId ?? '').toLowerCase() === needle ||
          contactAddressOf(c.audienceExternalId).toLowerCase() === needle ||
          (digits !== undefined && digits !== '' && (contactAddressOf(c.audienceExternalId).includes(digits) || (c.phone ?? '').includes(digits))),
      )
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || a.id.localeCompare(b.id));
    return { contacts: all.slice((q.page - 1) * q.limit, q.page * q.limit).map(publicContact), total: all.length };
  }

  /**
   * A contact with its conversation as the inbox lists it (null before it
   * ever had one) and its sessions, newest first, each open or resolved
   * (only the latest can be open).
   */
  async getContact(principal: Principal, id: string) {
    requireScope(principal, 'contacts:read');
    // By contact id, or by any audienceExternalId of the person (their phone form or their BSUID form).
    const contact = CONTACT_ID_PATTERN.test(id) ? await this.d.contacts.get(principal.organizationId, id) : await this.d.contacts.getById(principal.organizationId, id);
    if (contact === null) throw notFound('contact');
    const [own, record, ids] = await Promise.all([
      this.d.messages.contactSessions(principal.organizationId, contact.audienceExternalId),
      this.d.conversations.get(principal.organizationId, contact.audienceExternalId),
      this.d.contacts.aliasesOf(principal.organizationId, contact.audienceExternalId),
    ]);
    // A contact merged into this one keeps its sessions where they were written: they are this person's too.
    const merged = await Promise.all(ids.filter((x) => x !== contact.audienceExternalId).map((x) => this.d.messages.contactSessions(principal.organizationId, x)));
    const sessions = merged.length === 0 ? own : [...own, ...merged.flat()].sort((a, b) => b.openedAt.localeCompare(a.openedAt));
    const conversation = record === null ? null : (await this.withUnread(principal, [record], await this.summaries(principal.organizationId, [record])))[0]!;
    const labels = (await this.d.labels.labelsOf(principal.organizationId, 'contact', [contact.id])).get(contact.id) ?? [];
    return {
      contact: { ...publicContact(contact), labels },
      conversation,
      sessions: sessions.map((s) => ({ sessionId: s.sessionId, openedAt: s.openedAt, status: s.sessionId === record?.sessionId && record.sessionStatus === 'open' ? ('open' as const) : ('resolved' as const) })),
    };
  }

  /** Renames the contact and merges its attributes (`inbox:write`: what agents change from the workspace). */
  async updateContact(principal: Principal, id: string, change: ContactChange) {
    requireScope(principal, 'inbox:write');
    const current = await this.d.contacts.getById(principal.organizationId, id);
    if (current === null) throw notFound('contact');
    const count = Object.keys(changedContact(current, change).attributes ?? {}).length;
    if (count > MAX_CONTACT_ATTRIBUTES) {
      throw new AppError(422, 'too_many_attributes', `a contact has at most ${MAX_CONTACT_ATTRIBUTES} attributes; this change would give it ${count}`, { max: MAX_CONTACT_ATTRIBUTES, count });
    }
    const next = await this.d.contacts.update(principal.organizationId, id, change);
    if (next === null) throw notFound('contact');
    this.d.contactChanged(principal.organizationId, next);
    return publicContact(next);
  }

  // ------------------------------------------------------------------ search

  /**
   * One search box: contacts by name and phone digits (with `contacts:read`;
   * none without it) and messages by their words, each best match first.
   */
  async search(principal: Principal, text: string, limit: number) {
    requireScope(principal, 'inbox:read');
    const org = principal.organizationId;
    const [contacts, messages] = await Promise.all([principal.scopes.has('contacts:read') ? this.d.search.contacts(org, text, limit) : [], this.d.search.messages(org, text, limit)]);
    const words = searchTerms(text).words;
    return {
      contacts: contacts.map(publicContact),
      messages: messages.map((h) => ({ sessionId: h.sessionId, messageId: h.messageId, audienceExternalId: h.audienceExternalId, conversationId: h.audienceExternalId, snippet: snippet(h.text, words), sentAt: h.sentAt })),
    };
  }

  // ------------------------------------------------------------------ internals

  private async contact(principal: Principal, audienceExternalId: string): Promise<Contact> {
    const contact = await this.d.contacts.get(principal.organizationId, audienceExternalId);
    if (contact === null) throw notFound('conversation');
    return contact;
  }

  /** Agents act only on what they hold; admins on anything. */
  private onlyFrom(principal: Principal): { onlyFrom?: string } {
    return principal.role === 'admin' ? {} : { onlyFrom: principal.userId };
  }

  private sendOpts(principal: Principal, op: string, idempotencyKey: string | undefined) {
    return { ...(principal.role === 'admin' ? {} : { holder: principal.userId }), ...(idempotencyKey === undefined ? {} : { idempotencyKey: `inbox.${op}:${principal.userId}:${idempotencyKey}` }) };
  }

  /** A caller's key names one operation of one user: the same key on take and hand back are two commands. */
  private ask(principal: Principal, audienceExternalId: string, op: ConversationAction, command: ConversationCommand, idempotencyKey?: string): Promise<HandoverReply> {
    return this.d.conversationClient.askPlaced(principal.organizationId, audienceExternalId, command, idempotencyKey === undefined ? {} : { idempotencyKey: `inbox.${op}:${principal.userId}:${idempotencyKey}` }) as Promise<HandoverReply>;
  }

  private async after(principal: Principal, audienceExternalId: string, r: HandoverReply) {
    if (!r.success) throw refusal(r);
    const summary = await this.summary(principal.organizationId, audienceExternalId);
    if (summary === null) throw new AppError(503, 'not_ready', 'the conversation changed but is not listed yet; retry', undefined, { retryAfterSeconds: 1 });
    return summary;
  }
}

function refusal(r: HandoverReply): AppError {
  const h = r.handover;
  switch (r.reason) {
    case 'already_taken':
      return new AppError(409, 'already_taken', 'another agent has already taken this conversation', { assigneeId: h.status === 'agent' ? h.agentId : null });
    case 'not_assigned':
      return h.status === 'agent'
        ? new AppError(409, 'not_assigned_to_you', 'another agent holds this conversation', { assigneeId: h.agentId })
        : new AppError(409, 'not_assigned', 'no agent holds this conversation', { status: h.status === 'queued' ? 'queued' : 'bot' });
    case 'already_queued':
      return new AppError(409, 'already_queued', 'the conversation is already waiting in the queue');
    case 'with_agent':
      return new AppError(409, 'with_agent', 'an agent has this conversation', { assigneeId: h.status === 'agent' ? h.agentId : null });
    case 'already_with_bot':
      return new AppError(409, 'already_with_bot', 'the bot already has this conversation');
    case 'no_conversation':
      return new AppError(409, 'no_open_session', 'the conversation has no open session to resolve');
    default:
      return new AppError(409, r.reason ?? 'conflict', 'the conversation is not in a state that allows this');
  }
}

export interface ConversationViewInput {
  view?: ConversationView;
  sort?: ConversationSort;
  channelId?: string;
  contact?: string;
  assigneeId?: string;
  label?: string;
  sla?: SlaFilter;
  team?: string;
  cursor?: string;
  limit: number;
}

/** What a cursor is bound to: a cursor of another view, sort or filter would start a page at a row that view never showed. */
function cursorScope(view: ConversationView, sort: ConversationSort, q: { channelId?: string; contact?: string; assigneeId?: string; label?: string; sla?: SlaFilter; team?: string }): string {
  const base = [view, sort, q.channelId ?? null, q.contact ?? null, q.assigneeId ?? null];
  // Without a label (or sla or team filter) the scope is as before they existed, so cursors handed out then still work.
  const labelled = q.label === undefined ? base : [...base, q.label];
  const withSla = q.sla === undefined ? labelled : [...base, q.label ?? null, q.sla];
  return JSON.stringify(q.team === undefined ? withSla : [...base, q.label ?? null, q.sla ?? null, q.team]);
}

function writeCursor(at: ConversationKey, scope: string): string {
  return Buffer.from(JSON.stringify({ s: scope, k: at.key, i: at.id })).toString('base64url');
}

function readCursor(cursor: string, scope: string): ConversationKey {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = null;
  }
  const c = parsed as { s?: unknown; k?: unknown; i?: unknown } | null;
  if (c === null || typeof c !== 'object' || typeof c.k !== 'string' || typeof c.i !== 'string' || unstorableText([c.k, c.i]) !== null) {
    throw badRequest('invalid_cursor', 'the cursor is not one this list gave out');
  }
  if (c.s !== scope) throw badRequest('invalid_cursor', 'the cursor belongs to another view, sort or filter: pass the same ones as for the page that gave it');
  return { key: c.k, id: c.i };
}

function publicContact(c: Contact) {
  return { id: c.id, audienceExternalId: c.audienceExternalId, name: c.name, ...identityOf(c), attributes: c.attributes ?? {}, createdAt: c.createdAt };
}

/**
 * A contact's identifiers as the workspace shows them: the phone (null when
 * the customer hides it; a web-chat visitor's id there), BSUID, parent BSUID,
 * username, and the other ids that reach the same person.
 */
function identityOf(c: Pick<Contact, 'audienceExternalId'> & Partial<Pick<Contact, 'phone' | 'userId' | 'parentUserId' | 'username'>>) {
  if (isWebChatContactId(c.audienceExternalId)) return { phone: contactAddressOf(c.audienceExternalId), userId: null, parentUserId: null, username: null };
  return contactIdentityView(c);
}

/** The 24-hour window as a conversation summary shows it: open or not, and when it closes (or closed). */
function windowView(lastInboundAt: string | null, now: Date): { open: boolean; closesAt: string | null } {
  const w = customerServiceWindow(lastInboundAt, now);
  return w.open ? { open: true, closesAt: w.closesAt } : { open: false, closesAt: w.closedAt };
}
