export function NotFound() {
  return (
    <section class="panel">
      <h1>Not found</h1>
      <p>There is no page at this address. <a href="/inbox" data-route>Go to the inbox</a>.</p>
    </section>
  );
}
