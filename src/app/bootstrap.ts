import { SCOPES } from '../domain/scopes.js';
import { randomToken } from '../domain/secrets.js';
import type { AccountService } from './accounts.js';
import type { OperatorAuth } from './operator.js';
import type { Store } from '../store/index.js';

export interface DemoCredentials {
  operatorToken: string;
  organizationId: string;
  adminEmail: string;
  adminPassword: string;
  apiKey: string;
}

/**
 * First embedded start with nothing stored and no operator token configured:
 * create a demo organization, an admin and an all-scope key so a newcomer can
 * curl at once. Returns what to print (once), or null when nothing was made.
 */
export async function seedDemo(store: Store, accounts: AccountService, operator: OperatorAuth): Promise<DemoCredentials | null> {
  if (!(await store.isEmpty())) return null;
  const operatorToken = await operator.generate();
  if (operatorToken === null) return null;
  const org = await accounts.createOrganization('Demo');
  const adminPassword = randomToken(12);
  const admin = await accounts.createUser(org.id, { email: 'admin@demo.local', name: 'Demo Admin', role: 'admin', password: adminPassword });
  const key = await accounts.createApiKey(org.id, { userId: admin.id, name: 'demo (all scopes)', scopes: [...SCOPES] });
  return { operatorToken, organizationId: org.id, adminEmail: admin.email, adminPassword, apiKey: key.key };
}

export function demoBanner(c: DemoCredentials, baseUrl: string, extra: string[] = []): string {
  return [
    '',
    '================ Switchboard: first start (embedded mode) ================',
    'Created a demo organization. These secrets are shown only this once:',
    `  operator token : ${c.operatorToken}`,
    `  organization   : ${c.organizationId}`,
    `  admin login    : ${c.adminEmail} / ${c.adminPassword}   (sign in at ${baseUrl.replace(/\/$/, '')}/login)`,
    `  API key        : ${c.apiKey}   (all scopes)`,
    '',
    `  export SB_URL=${baseUrl} SB_KEY=${c.apiKey} SB_OPERATOR_TOKEN=${c.operatorToken}`,
    ...(extra.length > 0 ? ['', ...extra] : []),
    '==========================================================================',
    '',
  ].join('\n');
}
