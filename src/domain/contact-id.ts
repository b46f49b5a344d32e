/**
 * A contact's id, its `audienceExternalId`. On the chat network: the
 * customer's phone number in international digits (7 to 15, no +) and the
 * business phone number id it talks to, `4915112345678:106540352242922`; a
 * customer first seen without a phone number (one who hides it behind a
 * username) is named by their business-scoped user id instead,
 * `US.13491208655302741918:106540352242922`. On a web chat: the visitor's id
 * and the channel's id, `v_0f3a9c2e7b1d4a6c8e5f2b90:ch_Q8wLr3VnT5kZx2Hb`.
 * Every entry point (REST, CLI, MCP, sandbox paths) checks it with this one
 * pattern; either chat-network form of a person reaches the same contact.
 */
export const CONTACT_ID_PATTERN = /^(?:(?:[1-9]\d{6,14}|[A-Z]{2}\.[\dA-Za-z]{1,128}):\d{1,32}|v_[\da-f]{24}:ch_[\dA-Za-z]{8,40})$/;
export const CONTACT_ID_MESSAGE =
  'must be <phone>:<phone number id>, digits only, like 4915112345678:106540352242922, or <business-scoped user id>:<phone number id>, like US.13491208655302741918:106540352242922 (or <visitor id>:<channel id> on a web chat)';

/**
 * A business-scoped user id (BSUID): a two-letter ISO country code, a period,
 * and up to 128 letters and digits, `US.13491208655302741918`. Stable for one
 * WhatsApp user within one business portfolio; a new one when they change
 * their number.
 */
export const BSUID_PATTERN = /^[A-Z]{2}\.[0-9A-Za-z]{1,128}$/;
/** A customer's phone number as the network writes it: international digits, no +. */
export const PHONE_DIGITS_PATTERN = /^[1-9][0-9]{6,14}$/;
/** How a send or the sandbox names a chat-network customer: their phone digits, or their BSUID. */
export const CUSTOMER_ADDRESS_PATTERN = /^(?:[1-9][0-9]{6,14}|[A-Z]{2}\.[0-9A-Za-z]{1,128})$/;

export const isBusinessScopedUserId = (s: string): boolean => BSUID_PATTERN.test(s);

/** The first half of a chat-network contact id: the phone digits or the BSUID it is named by. */
export const contactAddressOf = (audienceExternalId: string): string => audienceExternalId.slice(0, audienceExternalId.indexOf(':'));

/** A web-chat visitor's id: `v_` and 24 hex digits. */
export const VISITOR_ID_PATTERN = /^v_[0-9a-f]{24}$/;

/** The `audienceExternalId` of a web-chat visitor: `<visitor id>:<channel id>`. */
export const webChatContactId = (visitorId: string, channelId: string): string => `${visitorId}:${channelId}`;

/** True for a web-chat contact's id (its second half names the channel, not a phone number id). */
export const isWebChatContactId = (audienceExternalId: string): boolean => audienceExternalId.startsWith('v_');
