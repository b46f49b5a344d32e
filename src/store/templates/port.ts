import type { GraphTemplateDefinitionComponent, TemplateShape } from '../../domain/templates.js';

/**
 * A message template of one channel, as the registry keeps it: identity
 * (name + language), category (which prices it), review status, and the
 * shape its sends must fit. `source` says whether it came from the network's
 * template API or was entered by an operator.
 */
export interface TemplateRecord {
  organizationId: string;
  channelId: string;
  name: string;
  language: string;
  category: string;
  status: string;
  /** The definition as the network describes it (HEADER / BODY / FOOTER / BUTTONS). */
  components: GraphTemplateDefinitionComponent[];
  /** Derived from `components`: the variables each component expects. */
  shape: TemplateShape;
  networkTemplateId: string | null;
  source: 'network' | 'operator';
  updatedAt: string;
}

/**
 * The template registry, per channel. Every method is scoped to one
 * organization's channel.
 */
export interface TemplateRepo {
  get(organizationId: string, channelId: string, name: string, language: string): Promise<TemplateRecord | null>;
  /** Sorted by name, then language. */
  list(organizationId: string, channelId: string): Promise<TemplateRecord[]>;
  put(t: TemplateRecord): Promise<void>;
  /** True when it existed. */
  delete(organizationId: string, channelId: string, name: string, language: string): Promise<boolean>;
  /**
   * Replaces the channel's network-sourced templates with `synced` in one
   * step: those listed are stored (overwriting operator entries of the same
   * name and language), network-sourced ones no longer listed are removed,
   * operator entries not listed stay. Returns how many were removed.
   */
  replaceFromNetwork(organizationId: string, channelId: string, synced: TemplateRecord[]): Promise<{ removed: number }>;
  /** Removes every template of the channel (when the channel is deleted). */
  deleteChannel(organizationId: string, channelId: string): Promise<void>;
}

export const templateKey = (name: string, language: string) => `${name}\u0000${language}`;
