/** A refusal of one field, next to its input (which names it with `aria-describedby` and `aria-invalid`). */
export function FieldError({ id, message }: { id: string; message: string | undefined }) {
  if (message === undefined) return null;
  return (
    <span id={id} class="field-error" data-testid="field-error">
      {message}
    </span>
  );
}

/** The attributes an input takes to point at its `FieldError`. */
export function invalid(id: string, message: string | undefined): { 'aria-invalid'?: true; 'aria-describedby'?: string } {
  return message === undefined ? {} : { 'aria-invalid': true, 'aria-describedby': id };
}
