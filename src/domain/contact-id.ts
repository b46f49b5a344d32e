/**
 * A chat-network contact's id, its `audienceExternalId`: the customer's
 * phone number in international digits (7 to 15, no +) and the business
 * phone number id it talks to, `4915112345678:106540352242922`. Every entry
 * point (REST, CLI, MCP, sandbox paths) checks it with this one pattern.
 */
export const CONTACT_ID_PATTERN = /^[1-9][0-9]{6,14}:[0-9]{1,32}$/;
export const CONTACT_ID_MESSAGE = 'must be <phone>:<phone number id>, digits only, like 4915112345678:106540352242922';
