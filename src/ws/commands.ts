import { isAppError } from '../errors.js';
import { requireScope } from '../app/principal.js';
import type { Principal } from '../domain/types.js';
import type { Logger } from '../log.js';
import type { TicketService } from '../app/tickets.js';
import type { InboxService } from '../inbox/index.js';
import type { ClientCommand } from './protocol.js';
import type { EphemeralBus, PresenceBoard } from './ephemeral.js';
import type { PresenceService } from './presence.js';

export interface CommandDeps {
  inbox: InboxService;
  tickets: TicketService;
  presence: PresenceBoard;
  /** Agents' chosen presence, kept in the presence store. */
  presenceService: PresenceService;
  bus: EphemeralBus;
  log: Logger;
}

export type CommandOutcome = { ok: true; result: unknown } | { ok: false; error: { code: string; message: string; details?: unknown } };

const REMEMBERED = 10_000;
const REMEMBER_MS = 10 * 60_000;

/**
 * Runs inbox commands for the sockets of this node.
 *
 * Guarantees:
 * - A command id is one command per user: the same id sent again while the
 *   first is running joins it, and sent again later (a retry after a
 *   reconnect) gets the first outcome, without acting twice. On this node
 *   that is kept in memory (the last 10,000 ids for 10 minutes); across
 *   nodes and restarts the conversation actor's idempotency keys (derived
 *   from the id) make conversation commands and sends act once.
 * - Every failure is an outcome with a code (the REST error codes); an
 *   unexpected one is logged and answered `internal_error` without details.
 */
export class CommandRunner {
  private readonly outcomes = new Map<string, { at: number; outcome: Promise<CommandOutcome> }>();

  constructor(private readonly d: CommandDeps) {}

  run(principal: Principal, cmd: ClientCommand): Promise<CommandOutcome> {
    const key = `${principal.organizationId}\u0000${principal.userId}\u0000${cmd.id}`;
    const now = Date.now();
    const seen = this.outcomes.get(key);
    if (seen !== undefined && now - seen.at < REMEMBER_MS) return seen.outcome;
    const outcome = this.execute(principal, cmd).then(
      (result): CommandOutcome => ({ ok: true, result: result ?? {} }),
      (err: unknown): CommandOutcome => {
        // Retryable failures (5xx, 429) are not remembered: the retry must run again.
        if (!isAppError(err) || err.status >= 500 || err.status === 429) this.outcomes.delete(key);
        if (isAppError(err)) return { ok: false, error: { code: err.code, message: err.message, ...(err.details === undefined ? {} : { details: err.details }) } };
        this.d.log.error('inbox command failed', { err, type: cmd.type });
        return { ok: false, error: { code: 'internal_error', message: 'the command failed' } };
      },
    );
    this.outcomes.set(key, { at: now, outcome });
    if (this.outcomes.size > REMEMBERED) {
      for (const [k, v] of this.outcomes) {
        if (this.outcomes.size <= REMEMBERED && now - v.at < REMEMBER_MS) break;
        this.outcomes.delete(k);
      }
    }
    return outcome;
  }

  private async execute(p: Principal, cmd: ClientCommand): Promise<unknown> {
    const { inbox } = this.d;
    switch (cmd.type) {
      case 'take':
        return { conversation: await inbox.take(p, cmd.conversationId, cmd.id) };
      case 'hand_back':
        return { conversation: await inbox.handBack(p, cmd.conversationId, cmd.id) };
      case 'resolve':
        return { conversation: await inbox.resolve(p, cmd.conversationId, cmd.id) };
      case 'transfer':
        return { conversation: await inbox.transfer(p, cmd.conversationId, cmd.agentId, cmd.id) };
      case 'reply':
        return inbox.reply(p, cmd.conversationId, cmd.message, cmd.id);
      case 'send_template':
        return inbox.sendTemplate(p, cmd.conversationId, cmd.template, cmd.id);
      case 'typing':
        requireScope(p, 'inbox:write');
        // Refused like every other command on another organization's conversation: nothing is relayed.
        await inbox.requireConversation(p, cmd.conversationId);
        this.d.bus.publish({ organizationId: p.organizationId, frame: { type: 'typing', userId: p.userId, conversationId: cmd.conversationId } });
        return {};
      case 'presence':
        return { status: (await this.d.presenceService.choose(p, cmd.status)).status };
      case 'ticket_create':
        // Keyed by the command id, so a retry on any node (or after a restart) creates the ticket once.
        return { ticket: await this.d.tickets.create(p, cmd.ticket, `inbox:${p.userId}:${cmd.id}`) };
      case 'ticket_update':
        return { ticket: await this.d.tickets.update(p, cmd.ticketId, cmd.changes) };
    }
  }
}

