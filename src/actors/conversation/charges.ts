import type { SessionMessage } from '../../domain/messages.js';
import type { MessagingHandlerDeps } from './messaging-commands.js';
import type { ConversationState, SendInFlight } from './state.js';
import { derivedMessageId } from '../../domain/message-id.js';

/* What a send costs: its reservations, and the credits given back when the network did not take or deliver it. */

/** Gives back a send's reservation (it did not happen), or a delivered-failed message's charge (the network does not bill it). */
export function chargesOf(deps: Pick<MessagingHandlerDeps, 'credits'>) {
  /** The send did not happen: its reservation goes back and is forgotten (a retry with the same key is charged anew). */
  const refund = async (s: ConversationState, reservation: { id: string } | undefined): Promise<boolean> => {
    if (reservation === undefined) return false;
    return (await deps.credits.release(s.organizationId, reservation.id)).released;
  };
  /** The network does not bill a message it could not deliver; at most once per reservation. */
  const refundFailed = async (m: SessionMessage): Promise<void> => {
    if (m.charge !== undefined) await deps.credits.refund(m.organizationId, m.charge.reservationId);
  };
  return { refund, refundFailed };
}

/** The reservation charging copy `attempt` (2, 3, …) of a resent keyed send; copy 1 is charged under the send's own reservation. */
export function resendReservationId(reservationId: string, attempt: number): string {
  return `${reservationId}.copy${attempt}`;
}

/** The reservation charging copy `attempt` of a keyed send when a status of it comes after a resend took over its charge. */
export function lateCopyReservationId(reservationId: string, attempt: number): string {
  return `${reservationId}.late${attempt}`;
}

/** The reservation that pays for an attempt in flight: its own (the send's for attempt 1, `.copyN` for a resend), or the one it took over. */
export function chargeOfAttempt(reservationId: string, f: SendInFlight): string {
  return f.paidBy ?? (f.attempt === 1 ? reservationId : resendReservationId(reservationId, f.attempt));
}

/** The stored message of a keyed send: named after the key, so every run and every copy of the send meets at one record. */
export function keyedSendRecordId(organizationId: string, audienceExternalId: string, sendKey: string): string {
  return derivedMessageId('keyed-send', organizationId, audienceExternalId, sendKey);
}

