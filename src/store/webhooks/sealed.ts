import { AppError } from '../../errors.js';
import type { SealedSecret, SecretBox } from '../secret-box.js';
import type { WebhookRegistration, WebhookStore } from './port.js';

const PREFIX = 'sealed:v1:';

/**
 * Webhook signing secrets encrypted at rest with the secret box that seals
 * channel credentials: a registration is stored with its current and
 * previous secret sealed (bound to the registration id) and handed out
 * opened, so the dispatcher signs with the real secret and nothing else
 * changes.
 *
 * Guarantees:
 * - No secret reaches the underlying store in clear text.
 * - A sealed secret copied onto another registration does not open.
 * - Registrations stored in clear text by older versions still open; they
 *   are sealed at their next update.
 * - Without a key (clustered without SECRETS_KEY) registrations cannot be
 *   written or read: 503 `secrets_key_missing`, never a secret in clear.
 */
export function sealedWebhookStore(inner: WebhookStore, box: SecretBox | null): WebhookStore {
  const need = (): SecretBox => {
    if (box === null) throw new AppError(503, 'secrets_key_missing', 'SECRETS_KEY is not set: webhook signing secrets cannot be stored or read (set the same 32-byte key, hex or base64, on every node)');
    return box;
  };
  const aad = (reg: WebhookRegistration, which: 'secret' | 'previous') => `webhook:${reg.organizationId}:${reg.id}:${which}`;
  const seal = (plain: string, ad: string) => {
    const s = need().seal(plain, ad);
    return `${PREFIX}${s.iv}.${s.tag}.${s.data}`;
  };
  const open = (stored: string, ad: string) => {
    if (!stored.startsWith(PREFIX)) return stored;
    const [iv, tag, data] = stored.slice(PREFIX.length).split('.') as [string, string, string];
    const sealed: SealedSecret = { v: 1, iv, tag, data };
    return need().open(sealed, ad);
  };
  const sealReg = (r: WebhookRegistration): WebhookRegistration => ({
    ...r,
    secret: seal(r.secret, aad(r, 'secret')),
    previousSecret: r.previousSecret === null ? null : { ...r.previousSecret, secret: seal(r.previousSecret.secret, aad(r, 'previous')) },
  });
  const openReg = (r: WebhookRegistration): WebhookRegistration => ({
    ...r,
    secret: open(r.secret, aad(r, 'secret')),
    previousSecret: r.previousSecret === null ? null : { ...r.previousSecret, secret: open(r.previousSecret.secret, aad(r, 'previous')) },
  });
  return {
    ...inner,
    // Methods of the inner store keep their `this`.
    enqueueDeliveries: (d) => inner.enqueueDeliveries(d),
    getDelivery: (o, id) => inner.getDelivery(o, id),
    listDeliveries: (o, r, q) => inner.listDeliveries(o, r, q),
    saveDelivery: (d) => inner.saveDelivery(d),
    dueDeliveries: (l, n, m) => inner.dueDeliveries(l, n, m),
    claimLanes: (n, m, o, l) => inner.claimLanes(n, m, o, l),
    renewLane: (l, o, ms) => inner.renewLane(l, o, ms),
    releaseLane: (l, o) => inner.releaseLane(l, o),
    deleteRegistration: (o, id) => inner.deleteRegistration(o, id),
    createRegistration: (reg) => inner.createRegistration(sealReg(reg)),
    updateRegistration: (reg) => inner.updateRegistration(sealReg(reg)),
    getRegistration: async (o, id) => {
      const r = await inner.getRegistration(o, id);
      return r === null ? null : openReg(r);
    },
    listRegistrations: async (o) => (await inner.listRegistrations(o)).map(openReg),
    fanOutRegistrations: (o) => inner.fanOutRegistrations(o),
  };
}
