import type { Principal } from '../domain/types.js';
import { CLOSE } from './protocol.js';

/** Why a socket's credential no longer carries it: the close code and reason, and the error a command racing it gets. */
export interface CredentialLapse {
  closeCode: number;
  closeReason: string;
  error: { code: string; message: string };
}

/**
 * Judges an open socket against what its credential gives now (`current`,
 * null when it no longer authenticates). The socket keeps the role and
 * scopes it opened with, so any change of role, or a scope it had and lost,
 * ends it: the client reconnects and gets what the user may do now.
 */
export function credentialLapse(opened: Principal, current: Principal | null): CredentialLapse | null {
  if (current === null) {
    return {
      closeCode: CLOSE.credentialsRevoked,
      closeReason: 'credentials revoked; sign in or use another key',
      error: { code: 'credentials_revoked', message: 'the session or API key of this socket has ended (sign-out, password change or reset, revoked key, deactivated user); sign in again or use another key' },
    };
  }
  const lost = [...opened.scopes].filter((s) => !current.scopes.has(s));
  if (current.role !== opened.role || lost.length > 0 || current.organizationId !== opened.organizationId || current.userId !== opened.userId) {
    return {
      closeCode: CLOSE.accessChanged,
      closeReason: 'access changed; reconnect',
      error: { code: 'access_changed', message: "this user's role or the key's scopes changed; reconnect to continue with what they allow now" },
    };
  }
  return null;
}
