/**
 * Storage port for the generic `/api/v1/resource` records. Adapters:
 * `sqlite.ts`, `postgres.ts`; one contract suite,
 * `test/webhooks/resource-store-contract.ts`. Names are unique per organization,
 * compared case-insensitively.
 */
export interface Resource {
  id: string;
  organizationId: string;
  name: string;
  type: string;
  config: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
  /** Bumped on every change (optimistic concurrency). */
  version: number;
}

export interface ResourceStore {
  /** Fails with AppError 409 `resource_name_taken`. */
  create(r: Resource): Promise<void>;
  get(organizationId: string, id: string): Promise<Resource | null>;
  /** Oldest first. */
  list(organizationId: string, page: { offset: number; limit: number }): Promise<{ resources: Resource[]; total: number }>;
  /**
   * Replaces `expected` (same id, same version) with `next`; false when it
   * changed in between. 409 `resource_name_taken` when the new name is used.
   */
  replace(expected: Resource, next: Resource): Promise<boolean>;
  delete(organizationId: string, id: string): Promise<boolean>;
}

export const nameKey = (name: string) => name.trim().toLowerCase();
