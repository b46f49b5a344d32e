/**
 * A contact's id, its `audienceExternalId`. On the chat network: the
 * customer's phone number in international digits (7 to 15, no +) and the
 * business phone number id it talks to, `4915112345678:106540352242922`. On
 * a web chat: the visitor's id and the channel's id,
 * `v_0f3a9c2e7b1d4a6c8e5f2b90:ch_Q8wLr3VnT5kZx2Hb`. Every entry point (REST,
 * CLI, MCP, sandbox paths) checks it with this one pattern.
 */
export const CONTACT_ID_PATTERN = /^(?:[1-9][0-9]{6,14}:[0-9]{1,32}|v_[0-9a-f]{24}:ch_[0-9A-Za-z]{8,40})$/;
export const CONTACT_ID_MESSAGE = 'must be <phone>:<phone number id>, digits only, like 4915112345678:106540352242922 (or <visitor id>:<channel id> on a web chat)';

/** A web-chat visitor's id: `v_` and 24 hex digits. */
export const VISITOR_ID_PATTERN = /^v_[0-9a-f]{24}$/;

/** The `audienceExternalId` of a web-chat visitor: `<visitor id>:<channel id>`. */
export const webChatContactId = (visitorId: string, channelId: string): string => `${visitorId}:${channelId}`;

/** True for a web-chat contact's id (its second half names the channel, not a phone number id). */
export const isWebChatContactId = (audienceExternalId: string): boolean => audienceExternalId.startsWith('v_');
