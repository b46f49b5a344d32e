/**
 * A user's credentials changed: a session ended (logout, sign-in rotation,
 * password change or reset), an API key was revoked, or the user was
 * deactivated or given another role. Says whose, not what: a listener
 * re-reads the store for the truth, so a notice that is late, duplicated or
 * names a change that did not touch it does no harm.
 */
export interface CredentialChange {
  organizationId: string;
  userId: string;
}

export type CredentialChangeListener = (change: CredentialChange) => void;

/** Listeners told after a change is stored (never before: what they re-read must show it). */
export class CredentialChangeListeners {
  private readonly listeners: CredentialChangeListener[] = [];

  add(listener: CredentialChangeListener): void {
    this.listeners.push(listener);
  }

  emit(change: CredentialChange): void {
    for (const l of this.listeners) l(change);
  }
}
