import { CONVERSATION_ACTOR, type ConversationCommand, type ConversationReplies } from '../actors/conversation/actor.js';
import type { MessagingCommand, MessagingReplies } from '../actors/conversation/messaging.js';
import { conversationKey } from '../actors/conversation/state.js';
import type { ActorSystem } from '../actors/system.js';
import { isWebChatContactId } from '../domain/contact-id.js';
import type { ContactRepo } from '../store/core/port.js';

/** Every command a contact's conversation actor takes, and its replies by kind. */
export type AnyConversationCommand = ConversationCommand | MessagingCommand;
export type AnyConversationReplies = ConversationReplies & MessagingReplies;

export interface AskOptions {
  idempotencyKey?: string;
}

/**
 * The one way to reach a contact's conversation, for every front (REST, MCP,
 * the inbox socket) and service. A person may be named by any of their ids
 * (their phone form or their BSUID form): `ask` resolves the id to the
 * person's canonical one first, so an alias never reaches an actor of its
 * own and the actor key never splits a person.
 *
 * Guarantees:
 * - Commands for one person reach one actor, whichever id names them.
 * - `askPlaced` skips the lookup for a caller that placed the person
 *   already (the webhook receiver, after `ContactRepo.identify`; a send
 *   whose id was resolved): it must pass the canonical id.
 * - A web-chat visitor's id is its own canonical id (nothing to resolve).
 */
export class ConversationClient {
  private readonly actors;

  constructor(
    system: Pick<ActorSystem, 'client'>,
    private readonly contacts: Pick<ContactRepo, 'resolve'>,
  ) {
    this.actors = system.client<AnyConversationCommand, AnyConversationReplies>(CONVERSATION_ACTOR);
  }

  /** The canonical id of the person an id names (the id itself when it is canonical, unknown, or a web chat's). */
  person(organizationId: string, audienceExternalId: string): Promise<string> {
    return isWebChatContactId(audienceExternalId) ? Promise.resolve(audienceExternalId) : this.contacts.resolve(organizationId, audienceExternalId);
  }

  async ask<C extends AnyConversationCommand>(organizationId: string, audienceExternalId: string, command: C, opts: AskOptions = {}): Promise<AnyConversationReplies[C['kind']]> {
    return this.askPlaced(organizationId, await this.person(organizationId, audienceExternalId), command, opts);
  }

  askPlaced<C extends AnyConversationCommand>(organizationId: string, canonical: string, command: C, opts: AskOptions = {}): Promise<AnyConversationReplies[C['kind']]> {
    return this.actors.ask(conversationKey(organizationId, canonical), command, opts) as Promise<AnyConversationReplies[C['kind']]>;
  }
}
