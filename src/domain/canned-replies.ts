/**
 * Canned replies: an organization's snippets an agent inserts in the
 * composer by typing `/` and the short code. The text is stored as written,
 * placeholders and all; the composer fills them at insert, with what it
 * knows of the conversation and the agent.
 */
export interface CannedReply {
  id: string;
  organizationId: string;
  /** Lower case, unique in the organization. */
  shortCode: string;
  text: string;
  createdAt: string;
  updatedAt: string;
}

/** 1 to 32 letters, digits, `_` or `-`; stored in lower case, so `Thanks` and `thanks` are one code. */
export const SHORT_CODE_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;
export const SHORT_CODE_RULE = '1 to 32 letters, digits, _ or - (stored in lower case)';
/** Most characters of a reply's text: a chat message's. */
export const CANNED_TEXT_MAX = 4096;
/** Most canned replies an organization keeps. */
export const CANNED_REPLIES_MAX = 500;

/** What a placeholder stands for, by its name inside `{{ }}`. */
export const CANNED_PLACEHOLDERS = {
  'contact.name': "the contact's name (its phone number when it has none)",
  'contact.phone': "the contact's phone number, with +",
  'agent.name': "the agent's name",
} as const;
export type CannedPlaceholder = keyof typeof CANNED_PLACEHOLDERS;

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** The placeholders in `text` that name nothing known (a typo the admin should see). */
export function unknownPlaceholders(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)].map((m) => m[1]!).filter((name) => !(name in CANNED_PLACEHOLDERS));
}

/** The text with each placeholder replaced by its value; a placeholder without a value stays as written. */
export function fillPlaceholders(text: string, values: Partial<Record<CannedPlaceholder, string>>): string {
  return text.replace(PLACEHOLDER, (whole, name: string) => values[name as CannedPlaceholder] ?? whole);
}
