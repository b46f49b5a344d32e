import { createHash, createHmac, randomBytes } from 'node:crypto';
import { safeEqual } from '../domain/secrets.js';

/*
 * Who a visitor is. An anonymous visitor gets a random id; a visitor the
 * business vouches for (its server signs the user's id with the channel's
 * identity secret) gets an id derived from the channel and that user id, so
 * the same user is one visitor, one contact and one conversation on every
 * device. Tokens are random, held by the browser, stored by hash only.
 */

/** A new anonymous visitor's id: `v_` and 24 hex digits (96 random bits). */
export function anonymousVisitorId(): string {
  return 'v_' + randomBytes(12).toString('hex');
}

/** A verified visitor's id: the same for the same user of the same channel, whatever the device. */
export function verifiedVisitorId(channelId: string, userId: string): string {
  return 'v_' + createHash('sha256').update(`webchat-user\u0000${channelId}\u0000${userId}`).digest('hex').slice(0, 24);
}

/** What the business's server computes for a signed-in user: HMAC-SHA256 of the user id with the channel's identity secret, hex. */
export function identityHash(secret: string, userId: string): string {
  return createHmac('sha256', secret).update(userId).digest('hex');
}

/** Constant-time check of a claimed user id's hash. */
export function identityVerified(secret: string, userId: string, hash: string): boolean {
  return safeEqual(identityHash(secret, userId), hash.toLowerCase());
}

export const VISITOR_TOKEN_PATTERN = /^wct_[A-Za-z0-9_-]{43}$/;

/** A new visitor token (256 random bits). */
export function newVisitorToken(): string {
  return 'wct_' + randomBytes(32).toString('base64url');
}

export function hashVisitorToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
