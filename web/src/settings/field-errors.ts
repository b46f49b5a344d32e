import { ApiError, describeError } from '../api/errors';

/**
 * A refusal split for a form: the API's `validation_failed` details by field
 * (`body.routing.businessHours.timeZone` kept as `routing.businessHours.timeZone`,
 * without the `body.` prefix), so each message can stand next to its input,
 * and the whole message for the top of the form.
 */
export interface FormErrors {
  message: string | null;
  fields: ReadonlyMap<string, string>;
}

export const NO_ERRORS: FormErrors = { message: null, fields: new Map() };

export function formErrors(err: unknown): FormErrors {
  const fields = new Map<string, string>();
  if (err instanceof ApiError && err.code === 'validation_failed' && Array.isArray(err.details)) {
    for (const d of err.details as { field?: unknown; message?: unknown }[]) {
      if (typeof d.field !== 'string' || typeof d.message !== 'string') continue;
      const key = d.field.replace(/^body\.?/, '');
      // The first message of a field is its most specific one; later ones add little.
      if (!fields.has(key)) fields.set(key, d.message);
    }
  }
  return { message: describeError(err), fields };
}

/** The message for a field, or for anything under it (`routing.autoAssign` also catches `routing.autoAssign.capacity`). */
export function errorAt(errors: FormErrors, field: string, nested = false): string | undefined {
  const own = errors.fields.get(field);
  if (own !== undefined || !nested) return own;
  for (const [k, v] of errors.fields) if (k.startsWith(`${field}.`)) return v;
  return undefined;
}
