import { createHash, randomUUID } from 'node:crypto';
import { AppError, isAppError } from '../errors.js';
import type { DomainEvent, EventPublisher } from '../events/types.js';
import { FencedWriteError, type ActorReplyStore, type ActorStateStore, type CommitScope } from '../store/actors/port.js';
import { actorUnavailable, ownershipLost } from './errors.js';
import type { Actor, ActorContext, ActorFactory, MessageMeta } from './types.js';

/** A command: plain data with a `kind` naming its handler. */
export interface Command {
  kind: string;
}

/** What a handler decides: the next state, the reply, and events to publish. */
export interface Outcome<S, R> {
  /** Return the same object to mean "unchanged" (no write unless a key or event needs one). */
  state: S;
  reply: R;
  events?: DomainEvent[];
  /**
   * A write to another store that must happen only once the state and the
   * events are durable: run after the fenced write, before the events are
   * published and the reply is sent (a report that needs no state write
   * publishes first: see `reportKinds`). If it fails the caller gets a retryable
   * 503, with the state and events already recorded. A command with such an
   * effect is never answered from its idempotency key (the key is not
   * remembered): a retry runs the handler again, so the handler must tell
   * from the store whether its effect happened (and the effect must be
   * idempotent, and harmless when late).
   */
  afterCommit?: () => Promise<void>;
  /**
   * Do not remember this reply under the command's idempotency key: it says
   * "not done yet, retry" (an outside call whose outcome is unknown, a
   * dependency that was down), so a retry with the same key must run the
   * handler again rather than get this reply forever.
   */
  forget?: boolean;
}

export interface HandlerContext<S = unknown> {
  key: string;
  /** Current time from the actor's clock. */
  now: Date;
  /** A fresh unique id (for sessions, events); injectable for tests. */
  newId(): string;
  /**
   * Makes `state` durable now, fenced like the final write, before the
   * handler goes on: for a record that must exist before an outside effect
   * (a send in flight before the network call). What was checkpointed stays
   * if the handler then throws; the outcome's state should build on it.
   * Throws like the final write (`ownership_lost`, retryable 503).
   */
  checkpoint(state: S): Promise<void>;
  /**
   * This actor's own memory of what its commands stored (a message it
   * appended, a status it wrote), so that a later command can skip reading
   * it back. It is emptied whenever the actor reloads its state or a command
   * fails, and a handler bounds what it keeps; a handler must treat it as a
   * hint that saves a read, never as a fence (every conditional write still
   * checks the store). Absent: nothing is remembered.
   */
  memo?: Map<string, unknown>;
  /**
   * Runs the handler's only write before the commit outside the command's
   * transaction, where the state is stored elsewhere (clustered): one
   * statement is atomic on its own, and a transaction around it would cost
   * two more statements and a round trip. Absent: run `fn` as it is.
   */
  apart?<T>(fn: () => Promise<T>): Promise<T>;
}

export type Handler<S, C, R> = (state: S, command: C, ctx: HandlerContext<S>) => Outcome<S, R> | Promise<Outcome<S, R>>;

/**
 * The handlers of an actor type: one per command kind, each mapping (state,
 * command) to an outcome. Adding a command kind is adding an entry here.
 */
export type HandlerMap<S, C extends Command, Replies extends { [K in C['kind']]: unknown }> = {
  [K in C['kind']]: Handler<S, Extract<C, { kind: K }>, Replies[K]>;
};

export interface DurableActorSpec<S, C extends Command, Replies extends { [K in C['kind']]: unknown }> {
  type: string;
  /** State of an address that has never been written. */
  initial(key: string): S;
  /** Validates a command that arrived (possibly from the network); throw AppError(400) to refuse it. */
  parse(command: unknown): C;
  handlers: HandlerMap<S, C, Replies>;
  /** Idempotency keys remembered per actor (oldest forgotten first). */
  maxIdempotencyKeys: number;
  /** Kinds that only read: never written, and their idempotency keys are not remembered. */
  readOnly?: readonly C['kind'][];
  /**
   * Kinds that mostly report what happened elsewhere (a status from the chat
   * network): when such a command leaves the state as it was, has no
   * idempotency key to remember and nothing of an earlier command is left
   * unpublished, its events go straight to the event log instead of through
   * a state write. Its fence is read alongside the handler and must be
   * current before anything is published, as the state write would have
   * required. A failed publish fails the command with nothing recorded, so
   * the caller must run it again (the chat network redelivers a webhook
   * until it gets a 200).
   */
  reportKinds?: readonly C['kind'][];
  /**
   * Writes a read model of the state elsewhere (the inbox's conversation
   * list) after each committed change, with the state's version. Must be
   * idempotent and keep only the highest version, since it runs again after
   * a failure and at every start. A failure does not undo the change: the
   * command answers a retryable 503 and the projection is retried before the
   * next command. It may return what to do once its write is committed
   * (announce the change): that is called after the command's unit of work
   * committed, never for a command that failed.
   */
  project?(state: S, version: number, now: Date): Promise<void | (() => void)>;
}

/** What is stored per actor: the state, recent idempotency keys with their replies, and events not yet published. */
export interface StoredActorState<S> {
  state: S;
  /** Grows by one with every write; absent in states written before versions existed. */
  version?: number;
  /** Recent keys with their replies, when the replies live in the state (no `replies` store). */
  replies: [key: string, reply: unknown][];
  /** Digests of recent keys (oldest first), when their replies live in a `replies` store. */
  applied?: string[];
  outbox: DomainEvent[];
}

/** A key's digest as the state remembers it: 72 bits of its SHA-256, 12 characters. */
export function idempotencyKeyDigest(key: string): string {
  return createHash('sha256').update(key).digest().subarray(0, 9).toString('base64url');
}

export interface DurableActorDeps {
  store: ActorStateStore;
  events: EventPublisher;
  newId?: () => string;
  /**
   * Where the state, the events, the handler's own writes and the projection
   * share one database (embedded): a command's writes commit as one
   * transaction, a checkpoint's before the handler goes on.
   */
  commits?: CommitScope;
  /**
   * Where the replies of applied commands are kept (clustered: PostgreSQL,
   * with a time to live), so that the state carries only a digest per key.
   * Unset: the replies live in the state itself.
   */
  replies?: ActorReplyStore;
}

/**
 * Returns a factory of actors whose state lives in an `ActorStateStore`:
 *
 * - `onStart` loads the state once; each command runs its handler and, when
 *   something changed, writes the new state with the actor's fence before
 *   replying (so an acknowledged command is durable, and a command of an
 *   owner that lost its partition is refused, never applied).
 * - A command with an idempotency key seen before gets the first reply
 *   without running again. Keys are stored in the same write as the state,
 *   so "applied" and "remembered" can't come apart. A reply the handler marks
 *   `forget` ("not done yet, retry") is not remembered: the retry runs again.
 *   With a `replies` store (clustered) the state keeps only a 72-bit digest
 *   of each key, in that same write, and the reply goes to the store beside
 *   it (with a time to live), so the state stays small whatever the
 *   traffic: a repeat of a key whose digest is in the state gets the stored
 *   reply, or a 409 `idempotency_reply_expired` once it is gone, never a
 *   second effect. The reply commits before the state write that names its
 *   digest, so a crash between the two leaves a reply nothing names, never
 *   a digest without its reply; it is marked with the owner's fencing
 *   epoch, so a stale owner's (whose state write is refused) never replaces
 *   the current owner's.
 * - Events are written to an outbox with the state, then published; the
 *   reply waits for publishing. If publishing fails the caller gets a
 *   retryable error, and the outbox is published again on the retry, on the
 *   next command or at the next start: events are at least once, with stable
 *   ids.
 * - A handler may return an `afterCommit` write to another store: it runs
 *   only after the fenced write succeeded, so that "the other store shows it"
 *   implies "its events are recorded" (a re-run can tell what is left to do).
 * - A report (`reportKinds`) that changes no state publishes its events
 *   without a state write: only once its fence was found current, only when
 *   no earlier event is left unpublished (so events keep their order), and
 *   before its `afterCommit` write (so that write still implies its events
 *   are recorded). Nothing records such events but the log, so a report
 *   whose publish failed is run again by its caller.
 * - A handler may `checkpoint` a state before an outside effect: the same
 *   fenced write, made before the effect, so a successor finds the record
 *   of an effect that may have happened.
 * - With `commits` (embedded: one SQLite database), everything a command
 *   writes after its catch-up and its last checkpoint (each committed at
 *   once, so no outside call waits inside a transaction) — the handler's
 *   own writes, the state with its idempotency key, the events, the
 *   `afterCommit` write and the projection — is one transaction: a crash or
 *   a failed commit keeps all of it or none, and the reply waits for that
 *   commit. With `commits` whose database does not hold the state
 *   (`holdsActorState: false`; clustered: PostgreSQL, the state in Redis),
 *   a command's writes there are two transactions: the handler's own
 *   writes and the reply, committed before the fenced state write (so the
 *   state never names a message, a refund or a reply that is not stored),
 *   and the `afterCommit` write and the projection, committed after it and before
 *   the events are published (a lone `afterCommit` write needs no
 *   transaction: it runs `apart`). Each write stays re-runnable, as the
 *   rules of docs/actors.md require, since the state write between them
 *   is not part of either.
 */
export function durableActor<S, C extends Command, Replies extends { [K in C['kind']]: unknown }>(
  spec: DurableActorSpec<S, C, Replies>,
  deps: DurableActorDeps,
): ActorFactory {
  return (ctx) => createDurableActor(spec, deps, ctx);
}

function createDurableActor<S, C extends Command, Replies extends { [K in C['kind']]: unknown }>(
  spec: DurableActorSpec<S, C, Replies>,
  deps: DurableActorDeps,
  ctx: ActorContext,
): Actor {
  const ref = { type: ctx.address.type, key: ctx.address.key, partition: ctx.fence.partition };
  const readOnly = new Set<string>(spec.readOnly ?? []);
  /** The command's writes commit in a unit that does not hold the state (clustered PostgreSQL, state in Redis). */
  const split = deps.commits !== undefined && deps.commits.holdsActorState === false;
  const reportKinds = new Set<string>(spec.reportKinds ?? []);
  const newId = deps.newId ?? randomUUID;
  let current: StoredActorState<S> = { state: spec.initial(ctx.address.key), replies: [], outbox: [] };
  /** The stored outbox still lists events that have been published since. */
  let outboxStale = false;

  /** A write whose outcome is unknown (the store failed mid-call) leaves the cache unreliable. */
  let reloadBeforeNext = false;
  /** The read model may lag the state: project before anything else. */
  let projectionStale = false;
  /** See `HandlerContext.memo`. */
  const memo = new Map<string, unknown>();
  /** See `HandlerContext.apart`: only where the unit does not hold the state (split). */
  const aloneApart = split && deps.commits!.apart !== undefined ? <T>(fn: () => Promise<T>) => deps.commits!.apart!(fn) : undefined;

  /** What the last projection of the running command announces once the command committed. */
  let announce: (() => void) | undefined;

  const project = async () => {
    if (spec.project === undefined) return;
    try {
      announce = (await spec.project(current.state, current.version ?? 0, new Date(ctx.clock.now()))) ?? announce;
      projectionStale = false;
    } catch (e) {
      projectionStale = true;
      ctx.log.warn('actor projection failed; retried before the next command', { err: e });
      throw actorUnavailable('the change is recorded but the conversation list is not updated yet; retry');
    }
  };

  const load = async () => {
    let stored: StoredActorState<S> | undefined;
    try {
      stored = (await deps.store.load(ref)) as StoredActorState<S> | undefined;
    } catch (e) {
      ctx.log.warn('actor state read failed', { err: e });
      throw actorUnavailable('conversation state could not be read; retry shortly');
    }
    current = stored ?? { state: spec.initial(ctx.address.key), replies: [], outbox: [] };
    memo.clear();
    outboxStale = false;
    reloadBeforeNext = false;
    // Whether the last run projected before it stopped is unknown; the projection keeps the highest version, so this is harmless.
    projectionStale = stored !== undefined;
    if (current.outbox.length > 0) {
      try {
        await flushOutbox();
      } catch {
        // Left for the next command; loading succeeded.
      }
    }
  };

  const save = async (next: StoredActorState<S>) => {
    // The state is stored elsewhere (clustered): what the handler wrote so far commits first, so the
    // state never names a write (a sent message, a refund) that is not there.
    if (split) await settle();
    try {
      await deps.store.save(ref, next, ctx.fence);
    } catch (e) {
      if (e instanceof FencedWriteError) throw ownershipLost(ctx.fence.partition, e);
      // Written or not, we can't tell: reload before the next command, and
      // let the caller retry with the same key (answered from the store's record if it was written).
      reloadBeforeNext = true;
      ctx.log.warn('actor state write failed', { err: e });
      throw actorUnavailable('conversation state could not be stored; retry with the same idempotency key');
    }
  };

  /** The first reply of a command applied under `key`, or null when the key was not applied (or is forgotten). */
  const rememberedReply = async (key: string): Promise<{ reply: unknown } | null> => {
    const inState = current.replies.find(([k]) => k === key);
    if (inState !== undefined) return { reply: inState[1] };
    if (deps.replies === undefined || current.applied === undefined) return null;
    const digest = idempotencyKeyDigest(key);
    if (!current.applied.includes(digest)) return null;
    let kept: { reply: unknown } | null;
    try {
      kept = await deps.replies.get(ref, digest);
    } catch (e) {
      ctx.log.warn('remembered reply read failed', { err: e });
      throw actorUnavailable('the reply of this command could not be read; retry with the same idempotency key');
    }
    if (kept !== null) return kept;
    // Applied, so running it again would apply it twice; its reply is gone (expired, or its write failed).
    throw new AppError(409, 'idempotency_reply_expired', 'a request with this idempotency key was already applied, and its reply is no longer kept; use a new key for a new request');
  };

  /**
   * Sends a reply to the reply store, marked with this owner's epoch (a stale owner's never replaces a
   * newer one's). Rejects with a retryable error; a rejection nobody waits for is not unhandled.
   */
  const keepReply = (digest: string, reply: unknown): Promise<void> => {
    const sent = deps.replies!.put(ref, digest, reply, ctx.fence.epoch).catch((e: unknown) => {
      ctx.log.warn('remembered reply write failed; the command is not applied', { err: e });
      throw actorUnavailable('conversation state could not be stored; retry with the same idempotency key');
    });
    sent.catch(() => {});
    return sent;
  };

  /** Reads the fence without waiting for it: settles to the error that would refuse the command, or null. */
  const readFence = (): Promise<Error | null> =>
    deps.store.checkFence(ref, ctx.fence).then(
      () => null,
      (e: unknown) => {
        if (e instanceof FencedWriteError) return ownershipLost(ctx.fence.partition, e);
        ctx.log.warn('actor fence read failed', { err: e });
        return actorUnavailable('conversation state could not be read; retry shortly');
      },
    );

  /** A report's events, published without a state write once its fence was found current. */
  const publishReport = async (fence: Promise<Error | null>, events: DomainEvent[]) => {
    const refused = await fence;
    if (refused !== null) throw refused;
    for (const ev of events) {
      try {
        await deps.events.publish(ev);
      } catch (e) {
        ctx.log.warn('event publish failed; the report must be made again', { eventId: ev.id, type: ev.type, err: e });
        throw actorUnavailable('the event log is unavailable; retry');
      }
    }
  };

  /** Makes the command's writes so far durable (before an outside effect: after the catch-up, in a checkpoint). */
  const settle = async () => {
    if (deps.commits === undefined) return;
    try {
      await deps.commits.settle();
    } catch (e) {
      reloadBeforeNext = true;
      ctx.log.warn('actor writes did not commit', { err: e });
      throw actorUnavailable('conversation state could not be stored; retry with the same idempotency key');
    }
  };

  /**
   * Split unit: commits what the command wrote after its state write (the effect and the projection,
   * which joins it here) before the events are published, so a consumer of an event finds what it
   * reports stored. A failed commit loses them together: a retry (503) makes them again.
   */
  const commitAfterState = async (hadEffect: boolean) => {
    const projected = projectionStale && spec.project !== undefined;
    // Not waited for before the commit, which is sent behind it: the two cost one round trip.
    const projecting = projected ? project() : Promise.resolve();
    projecting.catch(() => {});
    try {
      await deps.commits!.settle();
    } catch (e) {
      await projecting.catch(() => {});
      if (projected) projectionStale = true;
      ctx.log.warn('writes after the state write did not commit', { err: e });
      if (!hadEffect && !projected) return;
      await flushOutbox().catch(() => {});
      throw actorUnavailable('the change is recorded but not finished; retry');
    }
    await projecting;
  };

  const flushOutbox = async () => {
    while (current.outbox.length > 0) {
      const ev = current.outbox[0]!;
      try {
        await deps.events.publish(ev);
      } catch (e) {
        ctx.log.warn('event publish failed; kept in the outbox', { eventId: ev.id, type: ev.type, err: e });
        throw actorUnavailable('the event log is unavailable; retry with the same idempotency key');
      }
      current = { ...current, outbox: current.outbox.slice(1) };
      outboxStale = true;
    }
  };

  const handle = async (raw: unknown, meta: MessageMeta) => {
    if (reloadBeforeNext) await load();
    if (projectionStale) await project();
    // What catching up wrote commits now: a handler may make an outside call before its own first write.
    await settle();
    const key = meta.idempotencyKey;
    if (key !== undefined) {
      const seen = await rememberedReply(key);
      if (seen !== null) {
        await flushOutbox();
        return seen.reply;
      }
    }
    const command = spec.parse(raw);
    const handler = spec.handlers[command.kind as C['kind']] as Handler<S, C, unknown> | undefined;
    if (handler === undefined) throw new Error(`no handler for ${ctx.address.type} command ${command.kind}`);
    // A handler that throws changes nothing but what it checkpointed: the error is the reply.
    const checkpoint = async (state: S) => {
      const next: StoredActorState<S> = { ...current, state, version: (current.version ?? 0) + 1 };
      await save(next);
      await settle();
      current = next;
      outboxStale = false;
      projectionStale = true;
    };
    // Read alongside the handler: the check a report's state write would have made.
    const fence = reportKinds.has(command.kind) ? readFence() : null;
    const outcome = await handler(current.state, command, { key: ctx.address.key, now: new Date(ctx.clock.now()), newId, checkpoint, memo, ...(aloneApart === undefined ? {} : { apart: aloneApart }) });
    const events = outcome.events ?? [];
    const effect = outcome.afterCommit;
    const remember = key !== undefined && !readOnly.has(command.kind) && effect === undefined && outcome.forget !== true;
    if (fence !== null && outcome.state === current.state && events.length > 0 && !remember && current.outbox.length === 0) {
      // A report: its events go to the log in place of a state write (the outbox stays empty, so the flush below has nothing to do).
      await publishReport(fence, events);
    } else if (outcome.state !== current.state || events.length > 0 || remember || outboxStale) {
      let replies = current.replies;
      let applied = current.applied;
      let keeping: Promise<void> | undefined;
      if (remember && deps.replies !== undefined) {
        const digest = idempotencyKeyDigest(key);
        applied = [...(applied ?? []), digest].slice(-spec.maxIdempotencyKeys);
        keeping = keepReply(digest, outcome.reply);
      } else if (remember) {
        replies = [...replies, [key, outcome.reply]];
        if (replies.length > spec.maxIdempotencyKeys) replies = replies.slice(replies.length - spec.maxIdempotencyKeys);
      }
      const next: StoredActorState<S> = { state: outcome.state, version: (current.version ?? 0) + 1, replies, ...(applied === undefined ? {} : { applied }), outbox: [...current.outbox, ...events] };
      const changed = outcome.state !== current.state;
      // Split, the reply was sent in the transaction the state write commits first, so a failed reply
      // write refuses the command before it is applied; alone, it is waited for before the state write.
      if (!split && keeping !== undefined) await keeping;
      await save(next);
      await keeping;
      current = next;
      outboxStale = false;
      if (changed) projectionStale = true;
    }
    // Split: the writes after the state write (the effect, the projection) are one
    // transaction, committed before the events go out; a lone effect needs none around it.
    const lone = split && !projectionStale && deps.commits!.apart !== undefined;
    if (effect !== undefined) {
      try {
        await (lone ? deps.commits!.apart!(effect) : effect());
      } catch (e) {
        ctx.log.warn('write after commit failed; the command must run again', { kind: command.kind, err: e });
        // What was committed still goes out (at least once; a re-run records the same event ids again).
        await flushOutbox().catch(() => {});
        throw actorUnavailable('the change is recorded but not finished; retry');
      }
    }
    if (split) await commitAfterState(effect !== undefined);
    await flushOutbox();
    if (projectionStale) await project();
    return outcome.reply;
  };

  return {
    async onStart() {
      await load();
    },

    async onMessage(raw: unknown, meta: MessageMeta) {
      const commits = deps.commits;
      try {
        const reply = await (commits === undefined ? handle(raw, meta) : commits.together(() => handle(raw, meta)));
        const told = announce;
        announce = undefined;
        told?.();
        return reply;
      } catch (e) {
        announce = undefined;
        // What a failed command remembered may not have been stored.
        memo.clear();
        // The transaction did not commit: what this actor holds in memory may be ahead of the store.
        if (isAppError(e) && e.code === 'storage_unavailable') reloadBeforeNext = true;
        throw e;
      }
    },

    async onStop() {
      if (!outboxStale) return;
      try {
        await save(current);
        outboxStale = false;
      } catch (e) {
        // Harmless: the stored outbox is only republished (same event ids).
        if (!isAppError(e)) ctx.log.warn('could not persist the emptied outbox', { err: e });
      }
    },
  };
}
