import type { WebSocket } from 'ws';
import type { Principal } from '../domain/types.js';
import type { EventFeed, LoggedEvent } from '../events/types.js';
import type { Logger } from '../log.js';
import type { FannedEvent, FanoutSubscriber } from './fanout.js';
import { eventFrame } from './fanout.js';
import { CLOSE, clientCommandSchema, CLIENT_COMMAND_TYPES, MAX_FRAME_BYTES, type ClientCommand } from './protocol.js';
import type { CommandOutcome } from './commands.js';
import type { EphemeralFrame } from './ephemeral.js';
import { credentialLapse, type CredentialLapse } from './credential-check.js';
import { inUserWords, renderMessage } from '../validation-messages.js';
import { unstorableText, unstorableTextMessage } from '../storable-text.js';

export interface ConnectionLimits {
  /** Unsent bytes past which a client is cut off (1013). */
  maxBufferedBytes: number;
  /** Frames per second a client may send (token bucket, burst of twice as many). */
  framesPerSecond: number;
  /** Refused frames within 10 s after which the socket is closed (1008). */
  maxRefusedFrames: number;
  /** Commands in flight at once per socket. */
  maxInFlight: number;
}

export interface ConnectionDeps {
  feed: EventFeed;
  runCommand(principal: Principal, cmd: ClientCommand): Promise<CommandOutcome>;
  limits: ConnectionLimits;
  log: Logger;
  /** What the socket's credential (its session or API key) authenticates as now, from the store; null once it no longer does. */
  currentPrincipal(): Promise<Principal | null>;
  /** Called once when the socket is gone. */
  onClose(): void;
}

const REPLAY_BATCH = 500;

/**
 * One inbox socket: replays what the client missed, then streams the live
 * events it may see, and runs its commands.
 *
 * Guarantees:
 * - Events reach the client in log order, each once: replay reads the log
 *   after the client's `since` while live events are held back, then the
 *   held events newer than the last replayed one follow.
 * - A client that fell behind what the log keeps gets `resync_required`,
 *   never a silent gap.
 * - Only events of the socket's organization, and of those, what its user
 *   may see: agents see ticket events of tickets assigned to them or
 *   unassigned; every conversation event of the organization (one shared inbox).
 * - Memory per socket is bounded: once the unsent data passes
 *   `maxBufferedBytes` the socket is closed with 1013, and held-back live
 *   events during a replay count against the same bound.
 * - A command runs only after the socket's credential was read again from
 *   the store, on its receipt: once the credential has ended (4001) or
 *   narrowed (4003), the command is refused with that error and the socket
 *   closed. Commands still start in the order they arrived.
 */
export class InboxConnection implements FanoutSubscriber {
  readonly organizationId: string;
  private replaying = false;
  private held: FannedEvent[] = [];
  private heldBytes = 0;
  /** Highest seq sent (replay or live). */
  private sentSeq = 0;
  private closed = false;
  private tokens: number;
  private lastRefill = Date.now();
  private refused: number[] = [];
  private inFlight = 0;
  private released = false;
  /** The previous command's turn: commands start in arrival order although each waits for its credential check. */
  private commandTurn: Promise<unknown> = Promise.resolve();
  /** Answered the last ping (heartbeat). */
  alive = true;

  constructor(
    readonly socket: WebSocket,
    readonly principal: Principal,
    private readonly d: ConnectionDeps,
  ) {
    this.organizationId = principal.organizationId;
    this.tokens = d.limits.framesPerSecond * 2;
    socket.on('message', (data, isBinary) => this.onFrame(data as Buffer, isBinary));
    socket.on('pong', () => {
      this.alive = true;
    });
    socket.on('close', () => this.gone());
    socket.on('error', () => this.gone());
  }

  /** Sends the missed events after `since` (or `resync_required`), then switches to live delivery. */
  async start(welcome: object, since: number | undefined, position: number): Promise<void> {
    if (since === undefined) {
      this.sentSeq = position;
      this.send(JSON.stringify(welcome));
      return;
    }
    this.replaying = true;
    this.send(JSON.stringify(welcome));
    try {
      // Reads up to the log's head, which is at or past `position`; what arrives live meanwhile is held.
      let after = since;
      for (;;) {
        const r = await this.d.feed.read(this.organizationId, after, { limit: REPLAY_BATCH });
        if (this.closed) return;
        // A `since` past the head names no position of this log (another deployment's, or made up): start over too.
        if (r.truncated || after > r.headSeq) {
          this.send(JSON.stringify({ type: 'resync_required', oldestSeq: r.oldestSeq, seq: r.headSeq }));
          after = Math.max(r.headSeq, position);
          break;
        }
        for (const e of r.events) this.deliverNow({ ...e, frame: eventFrame(e) });
        after = r.events.at(-1)?.seq ?? after;
        if (!r.more) break;
        if (this.socket.bufferedAmount > this.d.limits.maxBufferedBytes) return this.cutOff();
      }
      this.sentSeq = Math.max(this.sentSeq, after);
      const held = this.held;
      this.held = [];
      this.heldBytes = 0;
      this.replaying = false;
      for (const h of held) if (h.seq > this.sentSeq) this.deliverNow(h);
      this.send(JSON.stringify({ type: 'replay_done', seq: this.sentSeq }));
    } catch (err) {
      this.d.log.warn('inbox: replay failed; closing so the client reconnects', { err });
      this.close(1011, 'replay failed; reconnect with since');
    }
  }

  deliver(e: FannedEvent): void {
    if (this.closed) return;
    if (this.replaying) {
      this.held.push(e);
      this.heldBytes += e.frame.length;
      if (this.heldBytes > this.d.limits.maxBufferedBytes) this.cutOff();
      return;
    }
    if (e.seq <= this.sentSeq) return;
    this.deliverNow(e);
  }

  /** Presence and typing of the other agents (a user's own are not echoed), and conversation rows and contact changes (to everyone). */
  ephemeral(frame: EphemeralFrame): void {
    if ('userId' in frame && frame.userId === this.principal.userId) return;
    this.send(JSON.stringify(frame));
  }

  private deliverNow(e: FannedEvent): void {
    this.sentSeq = Math.max(this.sentSeq, e.seq);
    if (!visibleTo(this.principal, e)) return;
    this.send(e.frame);
  }

  private send(frame: string): void {
    if (this.closed) return;
    if (this.socket.bufferedAmount + frame.length > this.d.limits.maxBufferedBytes) return this.cutOff();
    this.socket.send(frame);
  }

  private cutOff(): void {
    this.close(CLOSE.tryAgainLater, 'slow consumer; reconnect with since');
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.held = [];
    try {
      this.socket.close(code, reason);
    } catch {
      this.socket.terminate();
    }
    // A client that does not finish the closing handshake must not hold its buffer.
    setTimeout(() => this.socket.terminate(), 5000).unref();
    this.gone();
  }

  private gone(): void {
    this.closed = true;
    if (this.released) return;
    this.released = true;
    this.d.onClose();
  }

  // ------------------------------------------------------------------ client frames

  private onFrame(data: Buffer, isBinary: boolean): void {
    if (this.closed) return;
    if (!this.takeToken()) return this.refuse(undefined, 'rate_limited', `more than ${this.d.limits.framesPerSecond} frames a second; slow down`);
    if (isBinary) return this.refuse(undefined, 'invalid_frame', 'frames are JSON text');
    if (data.length > MAX_FRAME_BYTES) return this.refuse(undefined, 'frame_too_large', `frames are at most ${MAX_FRAME_BYTES} bytes`);
    let raw: unknown;
    try {
      raw = JSON.parse(data.toString('utf8'));
    } catch {
      return this.refuse(undefined, 'invalid_json', 'the frame is not valid JSON');
    }
    const id = typeof (raw as { id?: unknown })?.id === 'string' ? ((raw as { id: string }).id.slice(0, 100)) : undefined;
    const unstorable = unstorableText(raw);
    if (unstorable !== null) {
      const message = unstorableTextMessage(unstorable, 'frame');
      return this.refuse(id, 'validation_failed', message, [{ field: unstorable.path.join('.'), message }]);
    }
    const type = (raw as { type?: unknown })?.type;
    if (typeof type !== 'string' || !CLIENT_COMMAND_TYPES.includes(type as ClientCommand['type'])) {
      return this.refuse(id, 'unknown_frame_type', `type must be one of ${CLIENT_COMMAND_TYPES.join(', ')}`);
    }
    const parsed = clientCommandSchema.safeParse(raw, { error: inUserWords });
    if (!parsed.success) {
      const details = parsed.error.issues.map((i) => ({ field: i.path.join('.'), message: renderMessage(i.message, i.path, 'frame') }));
      return this.refuse(id, 'validation_failed', details.length > 0 ? `the command is invalid: ${details.slice(0, 3).map((d) => d.message).join('; ')}` : 'the command is invalid', details);
    }
    if (this.inFlight >= this.d.limits.maxInFlight) return this.refuse(id, 'too_many_in_flight', `at most ${this.d.limits.maxInFlight} commands at once; wait for their acks`);
    this.inFlight++;
    const cmd = parsed.data;
    const check = this.checkCredential();
    const turn = this.commandTurn.then(() => check);
    const answer = (o: CommandOutcome) => {
      this.inFlight--;
      this.send(JSON.stringify(o.ok ? { type: 'ack', commandId: cmd.id, result: o.result } : { type: 'error', commandId: cmd.id, error: o.error }));
    };
    void turn.then((lapse) => {
      if (lapse === 'unknown') return answer({ ok: false, error: { code: 'credential_check_unavailable', message: 'the credential of this socket could not be checked; retry shortly' } });
      if (lapse !== null) {
        answer({ ok: false, error: lapse.error });
        return this.close(lapse.closeCode, lapse.closeReason);
      }
      return this.d.runCommand(this.principal, cmd).then(answer);
    });
    // Registered after the command's own step, so the next command starts after this one did.
    this.commandTurn = turn.then(
      () => undefined,
      () => undefined,
    );
  }

  /** Reads the credential again; null while it still carries the socket, 'unknown' when the store could not say. */
  private async checkCredential(): Promise<CredentialLapse | null | 'unknown'> {
    try {
      return credentialLapse(this.principal, await this.d.currentPrincipal());
    } catch (err) {
      this.d.log.warn('inbox: could not re-check a socket\'s credential', { err });
      return 'unknown';
    }
  }

  /**
   * Re-checks the credential now (after a notice that the user's credentials
   * changed, or periodically) and closes the socket when it no longer
   * carries it. A failed read keeps the socket: the next check decides.
   */
  async recheck(): Promise<void> {
    if (this.closed) return;
    const lapse = await this.checkCredential();
    if (lapse !== null && lapse !== 'unknown') this.close(lapse.closeCode, lapse.closeReason);
  }

  private takeToken(): boolean {
    const now = Date.now();
    const cap = this.d.limits.framesPerSecond * 2;
    this.tokens = Math.min(cap, this.tokens + ((now - this.lastRefill) / 1000) * this.d.limits.framesPerSecond);
    this.lastRefill = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  private refuse(commandId: string | undefined, code: string, message: string, details?: unknown): void {
    const now = Date.now();
    this.refused = this.refused.filter((t) => now - t < 10_000);
    this.refused.push(now);
    if (this.refused.length > this.d.limits.maxRefusedFrames) return this.close(CLOSE.policyViolation, 'too many refused frames');
    this.send(JSON.stringify({ type: 'error', ...(commandId === undefined ? {} : { commandId }), error: { code, message, ...(details === undefined ? {} : { details }) } }));
  }
}

/** What one user may see of an event: agents only tickets assigned to them or unassigned. */
export function visibleTo(p: Principal, e: LoggedEvent): boolean {
  if (p.role === 'admin') return true;
  if (e.event.type === 'ticket.created' || e.event.type === 'ticket.updated' || e.event.type === 'ticket.commented') {
    // A comment's event carries its ticket beside the comment.
    const data = e.event.data as { assigneeId?: string | null; ticket?: { assigneeId?: string | null } } | null;
    const assignee = (e.event.type === 'ticket.commented' ? data?.ticket?.assigneeId : data?.assigneeId) ?? null;
    return assignee === null || assignee === p.userId;
  }
  return true;
}
