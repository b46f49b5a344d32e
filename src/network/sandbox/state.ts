import type { GraphMessage, GraphTemplateDefinition, GraphWebhookMessage } from '../graph-api.js';
import type { RenderedTemplate } from '../template-rules.js';

/** A business phone number registered on the sandbox network (Meta's side of a channel). */
export interface SandboxAccount {
  phoneNumberId: string;
  businessAccountId: string;
  displayPhoneNumber: string;
  verifiedName: string;
  accessToken: string;
  appSecret: string;
  verifyToken: string;
  /** Where webhooks go: an absolute URL, or a path on this service (resolved at delivery time). */
  callbackUrl: string;
  createdAt: string;
}

export type SandboxTemplate = GraphTemplateDefinition & { id: string };

/** A message on the sandbox network, in either direction; what the simulated customer's phone shows. */
export interface SandboxMessage {
  id: string;
  phoneNumberId: string;
  customer: string;
  /** Whom a to_customer message reached: the BSUID, and the phone when the business may see it. */
  recipient?: { userId: string; phone?: string };
  direction: 'to_customer' | 'from_customer';
  at: number;
  /** What the business sent (to_customer). */
  sent?: GraphMessage;
  /** What the customer sent, as it appeared in the webhook (from_customer). */
  received?: GraphWebhookMessage;
  /** What the business passed as `biz_opaque_callback_data`: echoed in every status webhook of the message. */
  callbackData?: string;
  /** The last status reported for a to_customer message. */
  status?: 'accepted' | 'sent' | 'delivered' | 'read' | 'failed';
  /** A contact-information request: the customer can answer it by sharing their number. */
  requestsContactInfo?: boolean;
  /** Reply buttons of an interactive message: tappable by the customer. */
  buttons?: { id: string; title: string }[];
  /** Quick-reply buttons of a template message, with the payload a tap returns. */
  quickReplies?: { index: number; text: string; payload: string }[];
  /** A template message as it reached the phone: rendered from the template the network held when it was sent. */
  template?: RenderedTemplate;
}

/**
 * A WhatsApp user as one business portfolio knows them on the sandbox
 * network: a business-scoped user id always, a phone number unless they
 * never had one here, a username once adopted. `hidePhone`: they hide their
 * number behind the username, so webhooks carry no phone.
 */
export interface SandboxCustomer {
  businessAccountId: string;
  userId: string;
  phone?: string;
  username?: string;
  hidePhone: boolean;
  profileName?: string;
}

/** The simulated phone's key of a customer: their number, or their BSUID when the network knows no number. */
export const sandboxCustomerKey = (c: Pick<SandboxCustomer, 'phone' | 'userId'>): string => c.phone ?? c.userId;

/** A file the customer sent: described by `GET /{media-id}`, downloaded from the URL that gives. */
export interface SandboxMedia {
  id: string;
  phoneNumberId: string;
  mimeType: string;
  sha256: string;
  fileSize: number;
  /** The file, base64. */
  data: string;
  at: number;
}

/**
 * The sandbox network's own records. The SQLite adapter keeps accounts,
 * templates, customer windows and recent messages in the sandbox network's
 * own database (`DATA_DIR/sandbox-network.db`); the PostgreSQL adapter keeps all of it in the
 * deployment's database (clustered mode, when the sandbox is asked for), so every node serves the
 * same simulated network.
 */
export interface SandboxState {
  putAccount(a: SandboxAccount): Promise<void>;
  getAccount(phoneNumberId: string): Promise<SandboxAccount | null>;
  accountsOfBusiness(businessAccountId: string): Promise<SandboxAccount[]>;
  listAccounts(): Promise<SandboxAccount[]>;
  putTemplate(businessAccountId: string, t: SandboxTemplate): Promise<void>;
  listTemplates(businessAccountId: string): Promise<SandboxTemplate[]>;
  /** One template by name and language (what every template send looks up). */
  getTemplate(businessAccountId: string, name: string, language: string): Promise<SandboxTemplate | null>;
  /** Deletes by name (every language) or by name and language; returns how many. */
  deleteTemplates(businessAccountId: string, name: string, language?: string): Promise<number>;
  /** Records the customer's latest message time (opens the 24-hour window). */
  noteInbound(phoneNumberId: string, customer: string, at: number): Promise<void>;
  lastInbound(phoneNumberId: string, customer: string): Promise<number | null>;
  putMessage(m: SandboxMessage): Promise<void>;
  /** Replaces a message already put (a new status); false, and nothing stored, when it is unknown or expired. */
  updateMessage(m: SandboxMessage): Promise<boolean>;
  getMessage(id: string): Promise<SandboxMessage | null>;
  /** The latest messages between the number and the customer, oldest first. */
  conversation(phoneNumberId: string, customer: string, limit: number): Promise<SandboxMessage[]>;
  /** Media the customer sent; kept as long as the messages that carry it, at most. */
  putMedia(m: SandboxMedia): Promise<void>;
  getMedia(id: string): Promise<SandboxMedia | null>;
  /** A WhatsApp user of the business portfolio, by BSUID or by phone number. */
  putCustomer(c: SandboxCustomer): Promise<void>;
  getCustomer(businessAccountId: string, userId: string): Promise<SandboxCustomer | null>;
  customerByPhone(businessAccountId: string, phone: string): Promise<SandboxCustomer | null>;
}

/** The largest file the simulated customer may send: the real network takes more, but the file travels base64 in a JSON body under the default BODY_LIMIT (the dashboard's simulator scales photos down to fit). */
export const SANDBOX_MEDIA_MAX_BYTES = 128 * 1024;
/** Files kept (in memory by the embedded adapter, in its table by the PostgreSQL one), oldest dropped first. */
export const SANDBOX_MEDIA_KEEP = 200;

/** Messages kept per conversation (the simulated phone's scrollback). */
export const SANDBOX_CONVERSATION_KEEP = 100;
