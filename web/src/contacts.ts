import { api, ok } from './api/client';
import { Observable } from './state';

/**
 * Contact names by contact id, for lists that name contacts (tickets): each
 * fetched once per page load from `GET /v1/contacts/{id}`; null while
 * unknown or when the contact has no name (the phone is shown then).
 */
export const contactNames = new Observable<ReadonlyMap<string, string | null>>(new Map());
const asked = new Set<string>();

export function loadContactNames(ids: Iterable<string>): void {
  for (const id of ids) {
    if (asked.has(id)) continue;
    asked.add(id);
    ok(api.GET('/v1/contacts/{id}', { params: { path: { id } } }))
      .then((d) => contactNames.set(new Map(contactNames.value).set(id, d.contact.name)))
      .catch(() => undefined);
  }
}

/** `+<phone>` of a `<phone>:<phone number id>`. */
export function phoneOf(audienceExternalId: string): string {
  return `+${audienceExternalId.slice(0, audienceExternalId.indexOf(':'))}`;
}
