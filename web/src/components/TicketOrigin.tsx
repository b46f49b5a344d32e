import type { TeamMember } from '../api/types';

interface Origin {
  kind?: string;
  name?: string | null;
  userId?: string | null;
  keyName?: string | null;
}

/**
 * Who or what made a ticket (an API key, an agent in the dashboard, an MCP
 * tool), as far as the ticket record says. Records without an origin show
 * that it was not recorded rather than a guess.
 */
export function TicketOrigin({ ticket, people }: { ticket: Record<string, unknown>; people: ReadonlyMap<string, TeamMember> }) {
  const o = (ticket.createdBy ?? ticket.origin) as Origin | undefined;
  if (!o || typeof o !== 'object') return <span class="muted origin" data-origin="unknown">not recorded</span>;
  const who = o.keyName ?? o.name ?? (o.userId ? people.get(o.userId)?.name : undefined);
  const kind = o.kind === 'api_key' ? 'API key' : o.kind === 'mcp' ? 'MCP' : o.kind === 'session' || o.kind === 'user' || o.kind === 'agent' ? 'Dashboard' : (o.kind ?? 'unknown');
  return (
    <span class="origin" data-origin={o.kind ?? 'unknown'}>
      {kind}
      {who ? `: ${who}` : ''}
    </span>
  );
}
