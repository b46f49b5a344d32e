import { randomUUID } from 'node:crypto';

/** A POST to a running service's operator API (`/admin/v1/…`): the JSON answer, or an error naming the path and status. */
export type OperatorPost = (path: string, body: unknown) => Promise<any>;

export function operatorApi(base: string, token: string): OperatorPost {
  return async (path, body) => {
    const r = await fetch(base + path, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await r.text();
    if (r.status >= 300) throw new Error(`${path}: ${r.status} ${text}`);
    return text === '' ? undefined : JSON.parse(text);
  };
}

/** An organization with an admin user and an API key of `scopes`, made through the operator API. */
export async function orgWithKey(op: OperatorPost, name: string, scopes: string[]): Promise<{ orgId: string; key: string }> {
  const org = await op('/admin/v1/organizations', { name });
  const user = await op(`/admin/v1/organizations/${org.id}/users`, { email: `admin-${randomUUID().slice(0, 8)}@example.com`, name: 'Admin', role: 'admin', password: 'admin password 1' });
  const { key } = await op(`/admin/v1/organizations/${org.id}/api-keys`, { userId: user.id, scopes });
  return { orgId: org.id as string, key: key as string };
}
