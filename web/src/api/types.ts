/*
 * Shapes the dashboard uses that are not (yet) in the generated ./schema.d.ts.
 * Each is written from the server's contract; when its routes are in
 * /openapi.json, `npm run gen:api` brings the generated type and the code
 * here moves to `api` (typed by path).
 */

export type Role = 'admin' | 'agent';

export interface SessionUser {
  id: string;
  email: string;
  name: string;
  role: Role;
  organizationId: string;
}

export interface DashboardUser {
  id: string;
  email: string;
  name: string;
  role: Role;
  active?: boolean;
  createdAt?: string;
}

export interface ApiKeyInfo {
  id: string;
  name: string;
  prefix?: string;
  scopes: string[];
  userId?: string;
  createdAt?: string;
  lastUsedAt?: string | null;
  revokedAt?: string | null;
}

export interface CreditEntry {
  at: string;
  kind: 'top_up' | 'charge' | 'refund' | 'release';
  amount: number;
  balance: number;
  reference: string | null;
}

export type ConversationStatus = 'bot' | 'queued' | 'assigned';

/** The conversation summary of docs/inbox.md. */
export interface ConversationSummary {
  id: string;
  audienceExternalId: string;
  contactId: string | null;
  contactName: string | null;
  phone: string;
  channelId: string;
  status: ConversationStatus;
  assigneeId: string | null;
  queuedAt: string | null;
  assignedAt: string | null;
  sessionId: string | null;
  sessionStatus: 'open' | 'resolved' | null;
  window: { open: boolean; closesAt: string | null };
  lastInboundAt: string | null;
  updatedAt: string;
}

export type SessionMessage = MessageShape;

/** A session message, as `GET /v1/sessions/{id}/messages` returns it. */
export interface MessageShape {
  _id: string;
  sessionId: string;
  sender: 'contact' | 'bot' | 'agent' | 'system';
  direction: 'inbound' | 'outbound';
  content: {
    type: string;
    text?: string;
    mediaUrl?: string;
    caption?: string;
    filename?: string;
    buttons?: { id: string; title: string }[];
    template?: { name: string; language: string };
    [k: string]: unknown;
  };
  sentAt: string;
  messageId: string | null;
  status?: 'accepted' | 'sent' | 'delivered' | 'read' | 'failed';
  statusUpdatedAt?: string;
  errors?: { code: number; title: string; message: string }[];
  agentId?: string;
  channelId: string;
  audienceExternalId: string;
}

export interface ConversationDetail extends ConversationSummary {
  messages: MessageShape[];
}

export interface ConversationPage {
  success: true;
  conversations: ConversationSummary[];
  page: number;
  limit: number;
  total: number;
}

/** A reply an agent sends inside the 24-hour window. */
export type MediaKind = 'image' | 'video' | 'audio' | 'document';
export type ReplyMessage =
  | { type: 'text'; text: string }
  | { type: 'buttons'; interactive: { body: { text: string }; buttons: { id: string; title: string }[] } }
  | { type: 'media'; media: { type: MediaKind } & Partial<Record<MediaKind, { link: string; caption?: string }>> };

export type TemplateParameter =
  | { type: 'text'; text: string }
  | { type: 'image'; image: { link: string } }
  | { type: 'video'; video: { link: string } }
  | { type: 'document'; document: { link: string } }
  | { type: 'payload'; payload: string };

export type TemplateComponent =
  | { type: 'header' | 'body'; parameters: TemplateParameter[] }
  | { type: 'button'; sub_type: 'quick_reply' | 'url' | 'copy_code' | 'flow'; index: number; parameters: TemplateParameter[] };

export interface TemplateSend {
  name: string;
  language: { code: string; policy: 'deterministic' };
  components?: TemplateComponent[];
}

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
