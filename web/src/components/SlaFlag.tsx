import { useEffect, useState } from 'preact/hooks';
import type { ConversationSummary } from '../api/types';

type Sla = NonNullable<ConversationSummary['sla']>;

function inWords(ms: number): string {
  const s = Math.ceil(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.ceil(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.ceil((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d`;
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
