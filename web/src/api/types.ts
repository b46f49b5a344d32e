import type { paths } from './schema';

/*
 * Named shapes the dashboard uses, taken from the generated ./schema.d.ts
 * (`npm run gen:api` from /openapi.json) so they cannot drift from the API.
 * The few written by hand below describe frames or bodies the document
 * types loosely (template components).
 */

export type Role = SessionUser['role'];

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type Ok<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: { 200: infer R } } ? Json<R> : never;
type Created<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: { 201: infer R } } ? Json<R> : never;
type Body<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { requestBody?: infer R } ? Json<NonNullable<R>> : never;

/** The signed-in user, as `GET /v1/auth/session` answers. */
export type SessionUser = Ok<'/v1/auth/session', 'get'>['user'];
/** A dashboard user as an admin manages it, `GET /v1/users`. */
export type DashboardUser = Ok<'/v1/users', 'get'>['users'][number];
/** An API key without its secret, `GET /v1/api-keys`. */
export type ApiKeyInfo = Ok<'/v1/api-keys', 'get'>['apiKeys'][number];
/** One line of the credits history, `GET /v1/credits`. */
export type CreditEntry = Ok<'/v1/credits', 'get'>['history'][number];
/** A channel as an admin manages it, `GET /v1/channels` (never its secrets). */
export type ChannelDetail = Ok<'/v1/channels', 'get'>['channels'][number];
/** What `POST /v1/channels` takes: a sandbox number, a real WhatsApp number, or a web chat. */
export type NewChannel = Body<'/v1/channels', 'post'>;
/** A channel just created: a real number's verify token this once, and the first template sync. */
export type CreatedChannel = Created<'/v1/channels', 'post'>;
/** A connected tool (mailbox, calendar, payment account), `GET /v1/tools`. */
export type ConnectedTool = Ok<'/v1/tools', 'get'>['tools'][number];
/** One member of the team directory, `GET /v1/team`. */
export type TeamMember = Ok<'/v1/team', 'get'>['members'][number];
/** A conversation with its last 50 messages, as `GET /v1/conversations/{id}` answers. */
export type ConversationDetail = Ok<'/v1/conversations/{id}', 'get'>['conversation'];
export type ConversationSummary = Omit<ConversationDetail, 'messages'>;
export type ConversationStatus = ConversationSummary['status'];
/** One of the organization's labels, `GET /v1/labels`. */
export type Label = Ok<'/v1/labels', 'get'>['labels'][number];
/** A page of `GET /v1/conversations` paged by page (`status`, `page`): those answers always carry `page` and `total`. */
export type ConversationPage = Ok<'/v1/conversations', 'get'> & { page: number; total: number };
/** A page of a view (`view`, `cursor`): `nextCursor` null after the last. */
export type ConversationViewPage = Ok<'/v1/conversations', 'get'> & { nextCursor: string | null };
export type ConversationCounts = Ok<'/v1/conversations/counts', 'get'>['counts'];
/** `GET /v1/search`. */
export type SearchResult = Ok<'/v1/search', 'get'>;
/** A contact with its conversation, sessions and tickets, `GET /v1/contacts/{id}`. */
export type ContactDetail = Ok<'/v1/contacts/{id}', 'get'>;
/** A session message, as `GET /v1/sessions/{id}/messages` returns it. */
export type MessageShape = Ok<'/v1/sessions/{sessionId}/messages', 'get'>[number] & { agentId?: string; errors?: { code: number; title: string; message: string }[] };
export type SessionMessage = MessageShape;
/** A reply an agent sends inside the 24-hour window. */
export type ReplyMessage = Body<'/v1/conversations/{id}/reply', 'post'>;
export type MediaKind = 'image' | 'video' | 'audio' | 'document';
/** An approved template to send, with its variables. */
export type TemplateSend = Body<'/v1/conversations/{id}/send-template', 'post'>['template'];

export type TemplateParameter =
  | { type: 'text'; text: string }
  | { type: 'image'; image: { link: string } }
  | { type: 'video'; video: { link: string } }
  | { type: 'document'; document: { link: string } }
  | { type: 'payload'; payload: string };

export type TemplateComponent =
  | { type: 'header' | 'body'; parameters: TemplateParameter[] }
  | { type: 'button'; sub_type: 'quick_reply' | 'url' | 'copy_code' | 'flow'; index: number; parameters: TemplateParameter[] };


/** One slot of a template that a send fills (`variables` of the template listing). */
export interface TemplateSlot {
  component: 'header' | 'body' | 'button';
  index?: number;
  subType?: 'quick_reply' | 'url' | 'copy_code' | 'flow';
  params: string[];
  optional: boolean;
}

export interface ChannelInfo {
  id: string;
  name: string;
  kind: 'whatsapp_cloud' | 'web_chat';
  network?: 'graph' | 'sandbox';
  phoneNumberId?: string;
  displayPhoneNumber?: string | null;
}

export interface TemplateInfo {
  name: string;
  language: string;
  category: string;
  status: string;
  source: string;
  variables: TemplateSlot[];
  components: { type?: string; text?: string; format?: string }[];
  updatedAt: string;
}
/** One entry of a ticket's activity (its creation, a change, a comment), `GET /v1/tickets/{ticketId}/activity`. */
export type TicketActivityEntry = Ok<'/v1/tickets/{ticketId}/activity', 'get'>['entries'][number];
/** An organization's canned reply, `GET /v1/canned-replies`. */
export type CannedReply = Ok<'/v1/canned-replies', 'get'>['cannedReplies'][number];
/** A channel's routing settings as `GET /v1/channels/{channelId}` shows them. */
export type ChannelRouting = Ok<'/v1/channels/{channelId}', 'get'>['routing'];
/** What `PATCH /v1/channels/{channelId}` takes for `routing`. */
export type RoutingPatch = NonNullable<Body<'/v1/channels/{channelId}', 'patch'>['routing']>;
/** An automation rule, `GET /v1/automation-rules` (its actions typed loosely there: see `RuleAction`). */
export type AutomationRule = Ok<'/v1/automation-rules', 'get'>['rules'][number];
/** What `POST /v1/automation-rules` takes. */
export type NewAutomationRule = Body<'/v1/automation-rules', 'post'>;
export type RuleCondition = NewAutomationRule['conditions'] extends (infer C)[] | undefined ? C : never;
/** One action of a rule, as the API takes it (a union by `type`). */
export type RuleAction = NewAutomationRule['actions'][number];
export type RuleActionType = RuleAction['type'];
/** A team of the organization, `GET /v1/teams`. */
export type Team = Ok<'/v1/teams', 'get'>['teams'][number];
/** What `POST /v1/teams` takes. */
export type NewTeam = Body<'/v1/teams', 'post'>;
/** Availability as each user chooses it (`PATCH /v1/users/me/availability`). */
export type Availability = Body<'/v1/users/me/availability', 'patch'>['status'];
