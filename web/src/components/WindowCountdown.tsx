import { useEffect, useState } from 'preact/hooks';

function span(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  return `${h}:${String(m).padStart(2, '0')}:${String(sec).padStart(2, '0')}`;
}

/** Whether the 24-hour customer-service window is open, and how long it has left. */
export function WindowCountdown({ closesAt }: { closesAt: string | null }) {
  const [now, setNow] = useState(Date.now());
  const end = closesAt === null ? null : Date.parse(closesAt);
  const open = end !== null && end > now;
  useEffect(() => {
    if (!open) return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [open, closesAt]);
  if (end === null) return <span class="window closed" data-testid="window">Window closed: no message from the customer yet — templates only</span>;
  if (!open) return <span class="window closed" data-testid="window">Window closed {new Date(end).toLocaleString()} — templates only</span>;
  return (
    <span class="window open" data-testid="window" title={`closes ${new Date(end).toLocaleString()}`}>
      Window open · <time dateTime={closesAt!} aria-label="time left in the customer-service window">{span(end - now)}</time> left
    </span>
  );
}

/** True while the window is open at `now`. */
export function windowOpen(closesAt: string | null, now = Date.now()): boolean {
  return closesAt !== null && Date.parse(closesAt) > now;
}
