import { AppError } from '../errors.js';
import type { Principal } from '../domain/types.js';
import type { ChannelRepo, WhatsAppChannel } from '../store/channels/port.js';
import type { CustomerActionResult, CustomerMediaKind, SandboxMessage, SandboxNetwork } from '../network/sandbox/index.js';
import type { RenderedTemplate } from '../network/template-rules.js';

/** What the simulated customer's phone shows of one message. */
export interface PhoneMessage {
  id: string;
  direction: 'to_customer' | 'from_customer';
  at: string;
  type: string;
  status?: string;
  text?: string;
  buttons?: { id: string; title: string }[];
  quickReplies?: { index: number; text: string }[];
  /** The business asks for the customer's number: they can share it (`…/contact-shares`). */
  requestsContactInfo?: boolean;
  /** A file the customer sent: its media id on the network and type. */
  media?: { id: string; mimeType: string; filename?: string };
  /** A template message as the customer sees it: its texts filled, its buttons (quick replies are tapped through `quickReplies`). */
  template?: RenderedTemplate & { name: string; language: string };
  message: unknown;
}

/**
 * Playing the customer on a sandbox channel of the caller's organization:
 * what the customer does here reaches the service as a real, signed inbound
 * webhook from the sandbox network.
 */
export class SandboxCustomer {
  constructor(
    private readonly channels: ChannelRepo,
    private readonly sandbox: SandboxNetwork,
  ) {}

  private async channel(principal: Principal, channelId: string): Promise<WhatsAppChannel> {
    const c = await this.channels.get(principal.organizationId, channelId);
    if (c === null) throw new AppError(404, 'channel_not_found', 'no channel with this id in the organization');
    if (c.kind !== 'whatsapp_cloud' || c.network !== 'sandbox') throw new AppError(409, 'not_a_sandbox_channel', 'only channels on the sandbox network have a simulated customer');
    return c;
  }

  /** A customer who adopts a username (and may hide their number): their BSUID on this channel's business account. */
  async createCustomer(p: Principal, channelId: string, body: { phone?: string; username: string; hidePhone: boolean; profileName?: string }) {
    const c = await this.channel(p, channelId);
    const made = await this.sandbox.createCustomer(c.phoneNumberId, body);
    return { customer: { userId: made.userId, username: made.username ?? null, phone: made.phone ?? null, hidePhone: made.hidePhone } };
  }

  /** The customer shares their number in answer to the business's contact-information request `messageId`. */
  async shareContactInfo(p: Principal, channelId: string, customer: string, messageId: string): Promise<CustomerActionResult> {
    const c = await this.channel(p, channelId);
    return this.sandbox.customerShareContactInfo(c.phoneNumberId, customer, messageId);
  }

  async sendText(p: Principal, channelId: string, phone: string, text: string, profileName?: string): Promise<CustomerActionResult> {
    const c = await this.channel(p, channelId);
    return this.sandbox.customerText(c.phoneNumberId, phone, text, profileName);
  }

  async sendMedia(
    p: Principal,
    channelId: string,
    phone: string,
    file: { kind: CustomerMediaKind; mimeType: string; bytes: Buffer; caption?: string; filename?: string },
    profileName?: string,
  ): Promise<CustomerActionResult> {
    const c = await this.channel(p, channelId);
    return this.sandbox.customerMedia(c.phoneNumberId, phone, file, profileName);
  }

  async shareLocation(p: Principal, channelId: string, phone: string, location: { latitude: number; longitude: number; name?: string; address?: string }, profileName?: string): Promise<CustomerActionResult> {
    const c = await this.channel(p, channelId);
    return this.sandbox.customerLocation(c.phoneNumberId, phone, location, profileName);
  }

  async shareContacts(p: Principal, channelId: string, phone: string, contacts: Record<string, unknown>[], profileName?: string): Promise<CustomerActionResult> {
    const c = await this.channel(p, channelId);
    return this.sandbox.customerContacts(c.phoneNumberId, phone, contacts, profileName);
  }

  async react(p: Principal, channelId: string, phone: string, messageId: string, emoji: string, profileName?: string): Promise<CustomerActionResult> {
    const c = await this.channel(p, channelId);
    return this.sandbox.customerReaction(c.phoneNumberId, phone, messageId, emoji, profileName);
  }

  async tapButton(p: Principal, channelId: string, phone: string, messageId: string, buttonId: string, profileName?: string): Promise<CustomerActionResult> {
    const c = await this.channel(p, channelId);
    return this.sandbox.customerTapButton(c.phoneNumberId, phone, messageId, buttonId, profileName);
  }

  async tapQuickReply(p: Principal, channelId: string, phone: string, messageId: string, index: number, profileName?: string): Promise<CustomerActionResult> {
    const c = await this.channel(p, channelId);
    return this.sandbox.customerTapQuickReply(c.phoneNumberId, phone, messageId, index, profileName);
  }

  async phone(p: Principal, channelId: string, phone: string): Promise<PhoneMessage[]> {
    const c = await this.channel(p, channelId);
    return (await this.sandbox.customerPhone(c.phoneNumberId, phone)).map(phoneView);
  }
}

function phoneView(m: SandboxMessage): PhoneMessage {
  const v: PhoneMessage = { id: m.id, direction: m.direction, at: new Date(m.at).toISOString(), type: m.sent?.type ?? m.received?.type ?? 'unknown', message: m.sent ?? m.received };
  if (m.status) v.status = m.status;
  if (m.requestsContactInfo === true) v.requestsContactInfo = true;
  const s = m.sent;
  if (s?.type === 'text') v.text = s.text.body;
  if (s?.type === 'interactive') v.text = s.interactive.body.text;
  if (s?.type === 'reaction') v.text = s.reaction.emoji === '' ? '(reaction removed)' : `${s.reaction.emoji} (reaction to ${s.reaction.message_id})`;
  if (s?.type === 'location') v.text = [s.location.name, s.location.address, `${s.location.latitude}, ${s.location.longitude}`].filter((x) => x !== undefined && x !== '').join(' — ');
  if (s?.type === 'contacts') v.text = s.contacts.map((c) => [c.name.formatted_name, ...(c.phones ?? []).map((p) => p.phone ?? p.wa_id ?? '')].filter((x) => x !== '').join(' ')).join('; ');
  if (s?.type === 'template') {
    // Messages the sandbox stored before it kept the rendering show the template's name only.
    if (m.template) v.template = { name: s.template.name, language: s.template.language.code, ...m.template };
    v.text = m.template?.body ?? `[template ${s.template.name}]`;
  }
  const r = m.received;
  if (r?.type === 'text') v.text = r.text?.body;
  if (r?.type === 'interactive') v.text = r.interactive?.button_reply?.title;
  if (r?.type === 'button') v.text = r.button?.text;
  const shared = r as { location?: { latitude: number; longitude: number; name?: string; address?: string }; contacts?: { name?: { formatted_name?: string } }[]; reaction?: { emoji?: string } } | undefined;
  if (r?.type === 'location' && shared?.location) v.text = [shared.location.name, shared.location.address, `${shared.location.latitude}, ${shared.location.longitude}`].filter((x) => x !== undefined && x !== '').join(' — ');
  if (r?.type === 'contacts') v.text = (shared?.contacts ?? []).map((c) => c.name?.formatted_name ?? '').filter((x) => x !== '').join('; ');
  if (r?.type === 'reaction') v.text = shared?.reaction?.emoji === '' ? '(reaction removed)' : shared?.reaction?.emoji;
  const file = r && (r.type === 'image' || r.type === 'video' || r.type === 'audio' || r.type === 'document') ? r[r.type] : undefined;
  if (file?.id !== undefined) {
    v.media = { id: file.id, mimeType: file.mime_type ?? 'application/octet-stream' };
    if (file.filename !== undefined) v.media.filename = file.filename;
    if (file.caption !== undefined) v.text = file.caption;
  }
  if (m.buttons) v.buttons = m.buttons;
  if (m.quickReplies) v.quickReplies = m.quickReplies.map((q) => ({ index: q.index, text: q.text }));
  return v;
}
