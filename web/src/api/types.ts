import type { paths } from './schema';

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

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type Ok<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: { 200: infer R } } ? Json<R> : never;
type Body<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { requestBody?: infer R } ? Json<NonNullable<R>> : never;

/** A conversation with its last 50 messages, as `GET /v1/conversations/{id}` answers. */
export type ConversationDetail = Ok<'/v1/conversations/{id}', 'get'>['conversation'];
export type ConversationSummary = Omit<ConversationDetail, 'messages'>;
export type ConversationStatus = ConversationSummary['status'];
export type ConversationPage = Ok<'/v1/conversations', 'get'>;
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
