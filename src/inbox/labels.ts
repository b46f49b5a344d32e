import { randomUUID } from 'node:crypto';
import { requireScope } from '../app/principal.js';
import { AppError, notFound } from '../errors.js';
import type { Clock } from '../clock.js';
import { labelNameKey, MAX_LABELS, MAX_LABELS_PER_TARGET, type Label, type LabelTargetKind } from '../domain/labels.js';
import type { Contact, Principal } from '../domain/types.js';
import type { ContactRepo } from '../store/core/port.js';
import type { ConversationIndexRepo } from '../store/conversations/port.js';
import type { LabelRepo } from '../store/labels/port.js';
import type { EventPublisher } from '../events/types.js';

export interface LabelServiceDeps {
  labels: LabelRepo;
  /** Where `conversation.labels_changed` goes, so every agent's lists show the change. */
  events: EventPublisher;
  conversations: ConversationIndexRepo;
  contacts: ContactRepo;
  clock: Clock;
  /** Tells every agent's socket that a contact changed (its labels here), once stored. */
  contactChanged: ContactChanged;
}

/** Tells every agent's socket of the organization that a contact changed, once the change is stored. */
export type ContactChanged = (organizationId: string, contact: Pick<Contact, 'id' | 'audienceExternalId'>) => void;

/** A label as the API shows it. */
export type PublicLabel = Pick<Label, 'id' | 'name' | 'color'>;

const publicLabel = (l: Label): PublicLabel => ({ id: l.id, name: l.name, color: l.color });

/** The colour a label gets when none is given. */
export const DEFAULT_LABEL_COLOR = '#6b7280';

/**
 * An organization's labels: admins manage the set (`settings:manage`), agents
 * put labels on conversations and contacts and take them off
 * (`inbox:write`), everyone in the inbox reads them (`inbox:read`). A label
 * is named in requests by its id or its name (any case).
 */
export class LabelService {
  constructor(private readonly d: LabelServiceDeps) {}

  async list(principal: Principal): Promise<PublicLabel[]> {
    requireScope(principal, 'inbox:read');
    return (await this.d.labels.list(principal.organizationId)).map(publicLabel);
  }

  async create(principal: Principal, input: { name: string; color?: string }): Promise<PublicLabel> {
    requireScope(principal, 'settings:manage');
    const label: Label = { id: `lbl_${randomUUID()}`, organizationId: principal.organizationId, name: input.name, color: (input.color ?? DEFAULT_LABEL_COLOR).toLowerCase(), createdAt: new Date(this.d.clock.now()).toISOString() };
    const r = await this.d.labels.create(label, MAX_LABELS);
    if (r === 'name_taken') throw nameTaken(input.name);
    if (r === 'too_many') throw new AppError(422, 'too_many_labels', `an organization has at most ${MAX_LABELS} labels`, { max: MAX_LABELS });
    return publicLabel(r);
  }

  async update(principal: Principal, ref: string, change: { name?: string; color?: string }): Promise<PublicLabel> {
    requireScope(principal, 'settings:manage');
    const label = await this.resolve(principal.organizationId, ref);
    if (label === null) throw notFound('label');
    const r = await this.d.labels.update(principal.organizationId, label.id, { ...change, ...(change.color === undefined ? {} : { color: change.color.toLowerCase() }) });
    if (r === 'name_taken') throw nameTaken(change.name!);
    if (r === null) throw notFound('label');
    return publicLabel(r);
  }

  /** Deletes the label, and takes it off every conversation and contact. */
  async delete(principal: Principal, ref: string): Promise<void> {
    requireScope(principal, 'settings:manage');
    const label = await this.resolve(principal.organizationId, ref);
    if (label === null || !(await this.d.labels.delete(principal.organizationId, label.id))) throw notFound('label');
  }

  /** The label a request names, by id or by name (any case); null when the organization has none such. */
  async resolve(organizationId: string, ref: string): Promise<Label | null> {
    const byId = await this.d.labels.get(organizationId, ref);
    if (byId !== null) return byId;
    const key = labelNameKey(ref);
    return (await this.d.labels.list(organizationId)).find((l) => labelNameKey(l.name) === key) ?? null;
  }

  async addToConversation(principal: Principal, audienceExternalId: string, refs: string[]): Promise<PublicLabel[]> {
    requireScope(principal, 'inbox:write');
    if ((await this.d.conversations.get(principal.organizationId, audienceExternalId)) === null) throw notFound('conversation');
    const labels = await this.attach(principal.organizationId, 'conversation', audienceExternalId, refs);
    await this.changed(principal, audienceExternalId, labels);
    return labels;
  }

  async removeFromConversation(principal: Principal, audienceExternalId: string, ref: string): Promise<PublicLabel[]> {
    requireScope(principal, 'inbox:write');
    if ((await this.d.conversations.get(principal.organizationId, audienceExternalId)) === null) throw notFound('conversation');
    const labels = await this.detach(principal.organizationId, 'conversation', audienceExternalId, ref);
    await this.changed(principal, audienceExternalId, labels);
    return labels;
  }

  /**
   * Tells the inbox socket and webhooks what the conversation's labels are now. Recorded after the
   * change: if the log is down the caller gets an error and a retry (the same labels) records it.
   */
  private async changed(principal: Principal, audienceExternalId: string, labels: PublicLabel[]): Promise<void> {
    await this.d.events.publish({
      id: randomUUID(),
      type: 'conversation.labels_changed',
      organizationId: principal.organizationId,
      createdAt: new Date(this.d.clock.now()).toISOString(),
      data: { audienceExternalId, labels, by: principal.userId },
    });
  }

  async addToContact(principal: Principal, contactId: string, refs: string[]): Promise<PublicLabel[]> {
    requireScope(principal, 'inbox:write');
    const contact = await this.d.contacts.getById(principal.organizationId, contactId);
    if (contact === null) throw notFound('contact');
    const labels = await this.attach(principal.organizationId, 'contact', contactId, refs);
    this.d.contactChanged(principal.organizationId, contact);
    return labels;
  }

  async removeFromContact(principal: Principal, contactId: string, ref: string): Promise<PublicLabel[]> {
    requireScope(principal, 'inbox:write');
    const contact = await this.d.contacts.getById(principal.organizationId, contactId);
    if (contact === null) throw notFound('contact');
    const labels = await this.detach(principal.organizationId, 'contact', contactId, ref);
    this.d.contactChanged(principal.organizationId, contact);
    return labels;
  }

  /** The labels on each target (in the order they were put on); a target without any maps to none. */
  async labelsOf(organizationId: string, kind: LabelTargetKind, targets: string[]): Promise<Map<string, PublicLabel[]>> {
    const out = new Map<string, PublicLabel[]>();
    if (targets.length === 0) return out;
    const ids = await this.d.labels.labelsOf(organizationId, kind, targets);
    if (ids.size === 0) return out;
    const all = new Map((await this.d.labels.list(organizationId)).map((l) => [l.id, publicLabel(l)]));
    for (const [target, labelIds] of ids) out.set(target, labelIds.flatMap((id) => all.get(id) ?? []));
    return out;
  }

  private async attach(org: string, kind: LabelTargetKind, target: string, refs: string[]): Promise<PublicLabel[]> {
    const found = await Promise.all(refs.map(async (ref) => ({ ref, label: await this.resolve(org, ref) })));
    const unknown = found.filter((f) => f.label === null).map((f) => f.ref);
    if (unknown.length > 0) throw new AppError(422, 'unknown_label', `no label named ${unknown.map((u) => `"${u}"`).join(', ')} in the organization: an admin creates labels with POST /v1/labels`, { labels: unknown });
    const r = await this.d.labels.attach(org, kind, target, found.map((f) => f.label!.id), MAX_LABELS_PER_TARGET);
    if (r === 'too_many') throw new AppError(422, 'too_many_labels', `a ${kind} carries at most ${MAX_LABELS_PER_TARGET} labels`, { max: MAX_LABELS_PER_TARGET });
    return (await this.labelsOf(org, kind, [target])).get(target) ?? [];
  }

  private async detach(org: string, kind: LabelTargetKind, target: string, ref: string): Promise<PublicLabel[]> {
    const label = await this.resolve(org, ref);
    if (label === null) throw notFound('label');
    // Taking off a label that is not on it changes nothing: the answer is the same.
    await this.d.labels.detach(org, kind, target, label.id);
    return (await this.labelsOf(org, kind, [target])).get(target) ?? [];
  }
}

function nameTaken(name: string): AppError {
  return new AppError(409, 'label_exists', `the organization already has a label named "${name}" (names are unique whatever their case)`, { name });
}
