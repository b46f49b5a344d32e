/*
 * An organization's labels: a name and a colour, put on conversations (the
 * thread: "refund", "bug") and on contacts (the person: "vip"). Plain data,
 * shared by the label store and the inbox.
 */

export interface Label {
  id: string;
  organizationId: string;
  name: string;
  /** `#rrggbb`. */
  color: string;
  createdAt: string;
}

/** What a label is put on: a conversation (by its `audienceExternalId`) or a contact (by its id). */
export type LabelTargetKind = 'conversation' | 'contact';

/** At most this many labels per organization, and per conversation or contact. */
export const MAX_LABELS = 200;
export const MAX_LABELS_PER_TARGET = 20;

/** Names are unique per organization whatever their case. */
export function labelNameKey(name: string): string {
  return name.trim().toLowerCase();
}
