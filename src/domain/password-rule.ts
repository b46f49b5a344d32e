/**
 * The one password rule, for every way a password is set: the operator API
 * and CLI (`user create`, `user reset-password`), an admin adding a user, a
 * user changing their own, and the dashboard's forms. Length is the rule
 * (no composition rules, as NIST SP 800-63B advises); the upper bound only
 * keeps hashing cheap.
 */
export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 200;

/** What the rule says, for help texts and schema descriptions. */
export const PASSWORD_RULE = `at least ${PASSWORD_MIN_LENGTH} characters`;
