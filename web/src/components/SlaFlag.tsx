import { useEffect, useState } from 'preact/hooks';
import type { ConversationSummary } from '../api/types';

type Sla = NonNullable<ConversationSummary['sla']>;

/** Time left, rounded up to what is shown: "45 s", "59 min", "1 h", "2 h 5 min", "3 d". */
function inWords(ms: number): string {
  const s = Math.ceil(ms / 1000);
  if (s < 60) return `${s} s`;
  // Minutes first, so that an hour less a few seconds reads "1 h", never "60 min" or "1 h 0 min".
  const m = Math.ceil(s / 60);
  if (m < 60) return `${m} min`;
  if (m < 1440) return m % 60 === 0 ? `${m / 60} h` : `${Math.floor(m / 60)} h ${m % 60} min`;
  return `${Math.floor(m / 1440)} d`;
}

const TARGET: Record<Sla['target'], string> = { first_response: 'first reply', next_response: 'reply' };

/**
 * A conversation's response-time target on its row: when the answer is due
 * while it runs, a red "overdue" once the server flagged it missed (the flag
 * is the server's: the page never declares a breach on its own clock, it
 * only says "due now" until the flag comes).
 */
export function SlaFlag({ sla }: { sla: Sla }) {
  const [now, setNow] = useState(Date.now());
  const due = Date.parse(sla.dueAt);
  const running = sla.breachedAt === null;
  useEffect(() => {
    if (!running) return;
    const t = setInterval(() => setNow(Date.now()), 15_000);
    return () => clearInterval(t);
  }, [running, sla.dueAt]);
  const at = new Date(due).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  const what = `${TARGET[sla.target]}${sla.priority ? ` (${sla.priority} priority)` : ''}`;
  if (!running) {
    return (
      <span class="badge sla overdue" data-testid="sla" data-sla="breached" title={`${what} was due at ${at}`}>
        overdue
      </span>
    );
  }
  return (
    <span class="sla due" data-testid="sla" data-sla="running" title={`${what} due at ${at}`}>
      {due > now ? `reply due in ${inWords(due - now)}` : 'reply due now'}
    </span>
  );
}
