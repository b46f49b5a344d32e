import { createHash } from 'node:crypto';
import type { StatusEvent } from '../../network/inbound.js';
import type { ConversationState, ParkedStatus, SendInFlight, UnpaidAttempt } from './state.js';

/*
 * What lets a keyed send reach the network once across an owner's crash or
 * pause: the attempt is recorded before it leaves, it carries its identity
 * to the network (`biz_opaque_callback_data`, echoed in its status
 * webhooks), and statuses of messages not stored yet are kept until they are.
 * Plain functions over the actor's state.
 */

/** Version tag of the callback data this service writes; anything else is someone else's. */
const CALLBACK_TAG = 'sb1';
/** Statuses kept per contact at most, and for how long, waiting for their message. */
export const PARKED_MAX = 100;
export const PARKED_TTL_MS = 15 * 60_000;
/** Sends in flight kept per contact at most (the oldest is forgotten first). */
export const IN_FLIGHT_MAX = 50;
/** Unpaid attempts kept per contact at most (the oldest forgotten first), and how long a late status of one is waited for (as long as a parked status is kept). */
export const UNPAID_MAX = 50;
export const UNPAID_TTL_MS = PARKED_TTL_MS;

/**
 * The callback data of one attempt of a keyed send: the send named by a
 * hash (the idempotency key itself never leaves), and the attempt number.
 */
export function callbackData(organizationId: string, audienceExternalId: string, sendKey: string, attempt: number): string {
  const send = createHash('sha256').update(`${organizationId}\u0000${audienceExternalId}\u0000${sendKey}`).digest('base64url').slice(0, 22);
  return `${CALLBACK_TAG}.${send}.${attempt}`;
}

/** Whether `data` names an attempt (any, up to `attempt`) of this send. */
export function isAttemptOf(data: string | undefined, organizationId: string, audienceExternalId: string, sendKey: string, attempt: number): boolean {
  if (data === undefined) return false;
  for (let a = 1; a <= attempt; a++) if (data === callbackData(organizationId, audienceExternalId, sendKey, a)) return true;
  return false;
}

export function inFlightOf(s: ConversationState, key: string): SendInFlight | undefined {
  return s.sendsInFlight?.find((f) => f.key === key);
}

export function withInFlight(s: ConversationState, f: SendInFlight): ConversationState {
  const others = (s.sendsInFlight ?? []).filter((x) => x.key !== f.key);
  return { ...s, sendsInFlight: [...others, f].slice(-IN_FLIGHT_MAX) };
}

export function withoutInFlight(s: ConversationState, key: string): ConversationState {
  if (inFlightOf(s, key) === undefined) return s;
  const rest = s.sendsInFlight!.filter((x) => x.key !== key);
  const next: ConversationState = { ...s };
  if (rest.length > 0) next.sendsInFlight = rest;
  else delete next.sendsInFlight;
  return next;
}

/** The first status the network reported for any attempt of the send: it names the message that reached it. */
export function echoOf(s: ConversationState, key: string, attempt: number): ParkedStatus | undefined {
  return s.parkedStatuses?.find((p) => isAttemptOf(p.callbackData, s.organizationId, s.audienceExternalId, key, attempt));
}

/** Keeps a status until its message is stored; the same report twice is kept once, expired ones go. */
export function withParked(s: ConversationState, e: StatusEvent, now: Date): ConversationState {
  const kept = fresh(s.parkedStatuses ?? [], now).filter((p) => !(p.networkMessageId === e.networkMessageId && p.status === e.status));
  const p: ParkedStatus = { networkMessageId: e.networkMessageId, status: e.status, at: e.at, errors: e.errors, parkedAt: now.toISOString() };
  if (e.recipientId !== undefined) p.recipientId = e.recipientId;
  if (e.recipientUserId !== undefined) p.recipientUserId = e.recipientUserId;
  if (e.callbackData !== undefined) p.callbackData = e.callbackData;
  return { ...s, parkedStatuses: [...kept, p].slice(-PARKED_MAX) };
}

/** The state without the parked statuses of these messages (and without expired ones). */
export function withoutParked(s: ConversationState, networkMessageIds: ReadonlySet<string>, now: Date): ConversationState {
  if (s.parkedStatuses === undefined) return s;
  const rest = fresh(s.parkedStatuses, now).filter((p) => !networkMessageIds.has(p.networkMessageId));
  if (rest.length === s.parkedStatuses.length) return s;
  const next: ConversationState = { ...s };
  if (rest.length > 0) next.parkedStatuses = rest;
  else delete next.parkedStatuses;
  return next;
}

function fresh(list: ParkedStatus[], now: Date): ParkedStatus[] {
  return list.filter((p) => now.getTime() - Date.parse(p.parkedAt) < PARKED_TTL_MS);
}

/** Remembers an attempt whose charge a resend took over, until a late status of it comes or its time is up. */
export function withUnpaid(s: ConversationState, u: UnpaidAttempt, now: Date): ConversationState {
  const kept = (s.unpaidAttempts ?? []).filter((x) => now.getTime() - Date.parse(x.since) < UNPAID_TTL_MS && x.callbackData !== u.callbackData);
  return { ...s, unpaidAttempts: [...kept, u].slice(-UNPAID_MAX) };
}

/** The unpaid attempt a status echoing `data` reports, while it is remembered. */
export function unpaidAttemptOf(s: ConversationState, data: string | undefined, now: Date): UnpaidAttempt | undefined {
  if (data === undefined) return undefined;
  return s.unpaidAttempts?.find((x) => x.callbackData === data && now.getTime() - Date.parse(x.since) < UNPAID_TTL_MS);
}
