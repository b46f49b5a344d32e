import type { Label, LabelTargetKind } from '../../domain/labels.js';

/** Why a label write changed nothing. */
export type LabelRefusal = 'name_taken' | 'too_many';

/**
 * An organization's label set and what each label is on. Every method is
 * scoped to one organization; a label of another one is never found.
 */
export interface LabelRepo {
  /** Every label of the organization, by name. */
  list(organizationId: string): Promise<Label[]>;
  get(organizationId: string, id: string): Promise<Label | null>;
  /** Creates the label unless its name (any case) is taken or the organization has `max` already; the check and the write are one step. */
  create(label: Label, max: number): Promise<Label | LabelRefusal>;
  /** Renames or recolours; null for an unknown label. */
  update(organizationId: string, id: string, change: { name?: string; color?: string }): Promise<Label | null | 'name_taken'>;
  /** Deletes the label and takes it off everything it was on; false for an unknown label. */
  delete(organizationId: string, id: string): Promise<boolean>;
  /** Puts the labels on the target (those already on it stay once); refused when it would carry more than `max`. */
  attach(organizationId: string, kind: LabelTargetKind, target: string, labelIds: string[], max: number): Promise<'ok' | 'too_many'>;
  /** Takes the label off the target; false when it was not on it. */
  detach(organizationId: string, kind: LabelTargetKind, target: string, labelId: string): Promise<boolean>;
  /** The label ids on each of these targets, in the order they were put on (targets without any are absent). */
  labelsOf(organizationId: string, kind: LabelTargetKind, targets: string[]): Promise<Map<string, string[]>>;
}
