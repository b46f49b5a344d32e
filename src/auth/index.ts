export { AuthSessions, INBOX_TOKEN_TTL_MS, type SessionCredential, type SessionSettings, type SessionUser, type SessionView, type SignedIn } from './sessions.js';
export { RequestAuthenticator, keyPrefixOf, type RequestCredentials } from './authenticator.js';
export { FailedAuthThrottle, tooManyAttempts, type AuthAttempt, type ThrottleLimits } from './throttle.js';
export { SESSION_COOKIE, readCookie } from './cookies.js';
