/** What a person sees when they open something their role does not allow. */
export function Refusal({ title, children }: { title: string; children?: preact.ComponentChildren }) {
  return (
    <section class="panel refusal" role="alert">
      <h1>{title}</h1>
      {children}
    </section>
  );
}
