import type { AppError } from '../errors.js';

/*
 * Turns an application error into the text of an `isError: true` tool
 * result. The reader is a language model deciding what to do next, so each
 * message says what went wrong and what would work instead. Pure: no I/O.
 */

type Hint = (err: AppError) => string | undefined;

const detail = (err: AppError, key: string): unknown =>
  err.details !== null && typeof err.details === 'object' ? (err.details as Record<string, unknown>)[key] : undefined;

const HINTS: Record<string, Hint> = {
  insufficient_scope: (e) =>
    `This tool cannot work with the current API key: it lacks the scope ${String(detail(e, 'requiredScope') ?? '')}. ` +
    'Do not retry; tell the user an administrator must issue a key with that scope.',
  not_found: (e) => {
    if (e.message.startsWith('ticket')) return 'It does not exist or is not visible to this API key. Check the ticketId (list_tickets shows the tickets this key can see).';
    if (e.message.startsWith('contact')) return 'No contact of this organization has that audienceExternalId; give it exactly as `<phone>:<phone number id>`, as the inbound_message webhook names it.';
    if (e.message.startsWith('session')) return "Check the sessionId, or pass the contact's audienceExternalId to read their latest conversation.";
    return 'It does not exist in this organization or is not visible to this API key.';
  },
  channel_not_found: () => "The organization has no such channel; call list_channels, or use the channelId of the customer's inbound_message webhook.",
  unknown_contact: () => 'No contact of this organization has that audienceExternalId. Omit it, or use the exact `<phone>:<phone number id>` of an existing contact.',
  unknown_assignee: () => 'assigneeId must be the ID of a dashboard user of this organization; omit it to leave the ticket unassigned.',
  validation_failed: () => 'Fix the fields named above and call the tool again.',
  idempotency_key_reused: () => 'That idempotencyKey was already used with other arguments; use a new key for a new request.',
  outside_customer_service_window: () =>
    'The contact has not written in the last 24 hours, so free-form messages are refused: send an approved template instead with send_template_message, then wait for the contact to reply.',
  conversation_with_agent: () =>
    'A human agent has this conversation (handover), so the bot must not send free-form messages now. Wait until the conversation is handed back to the bot.',
};

/** When the code has no hint of its own, the status class says enough. */
const STATUS_HINTS: Record<number, Hint> = {
  402: () => 'The organization has run out of credits; tell the user. Retrying will not help.',
  429: (e) => `Too many requests; wait ${e.retryAfterSeconds ?? 60} seconds before trying again.`,
  502: () => 'The chat network refused the message; the details say why. Do not resend it unchanged.',
  503: (e) => `This is temporary; try again in ${e.retryAfterSeconds ?? 1} seconds.`,
};

export function toolErrorText(err: AppError): string {
  const parts = [`Error (${err.code}): ${err.message}.`];
  const fields = Array.isArray(err.details)
    ? (err.details as { field?: unknown; message?: unknown }[])
        .filter((d) => typeof d?.field === 'string')
        .map((d) => `${String(d.field)}: ${String(d.message)}`)
    : [];
  if (fields.length > 0) parts.push(`Invalid fields: ${fields.join('; ')}.`);
  const hint = (HINTS[err.code] ?? STATUS_HINTS[err.status])?.(err);
  if (hint) parts.push(hint);
  const errorDetails = err.extra?.errorDetails;
  if (errorDetails !== undefined) parts.push(`Network error details: ${JSON.stringify(errorDetails)}.`);
  return parts.join(' ').replace(/\.\./g, '.');
}
