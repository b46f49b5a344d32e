import { useEffect, useState } from 'preact/hooks';
import type { SessionUser } from '../api/types';
import { Refusal } from '../components/Refusal';
import type * as SettingsSections from '../settings/sections';

type Sections = typeof SettingsSections;

const SECTIONS = [
  { id: 'users', label: 'Users' },
  { id: 'api-keys', label: 'API keys' },
  { id: 'webhooks', label: 'Webhooks' },
  { id: 'channels', label: 'Channels & templates' },
  { id: 'automation', label: 'Automation rules' },
  { id: 'teams', label: 'Teams' },
  { id: 'canned-replies', label: 'Canned replies' },
  { id: 'tools', label: 'Connected tools' },
  { id: 'credits', label: 'Credits' },
] as const;

let sections: Promise<Sections> | null = null;

/** The settings sections' code, fetched the first time settings open (see ../settings/sections). */
function useSections(): { s: Sections | null; error: string | null } {
  const [s, setS] = useState<Sections | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    (sections ??= import('../settings/sections')).then(
      (m) => live && setS(m),
      () => {
        // A failed chunk load (a new deployment, the network) is tried again on the next visit.
        sections = null;
        if (live) setError('The settings could not be loaded. Reload the page to try again.');
      },
    );
    return () => {
      live = false;
    };
  }, []);
  return { s, error };
}

/** The organization's settings, for admins only (the API refuses agents too). */
export function SettingsScreen({ user, section }: { user: SessionUser; section: string }) {
  if (user.role !== 'admin') {
    return (
      <Refusal title="Settings are for admins">
        <p>Your account is an agent account. An admin of your organization can change users, keys, webhooks, channels and their routing, automation rules, teams, canned replies and connected tools.</p>
        <a href="/inbox" data-route>Back to the inbox</a>
      </Refusal>
    );
  }
  return (
    <div class="settings">
      <nav class="subnav" aria-label="Settings">
        {SECTIONS.map((s) => (
          <a key={s.id} href={`/settings/${s.id}`} data-route aria-current={section === s.id ? 'page' : undefined}>
            {s.label}
          </a>
        ))}
      </nav>
      <div class="settings-body">
        <Section user={user} section={section} />
      </div>
    </div>
  );
}

function Section({ user, section }: { user: SessionUser; section: string }) {
  const { s, error } = useSections();
  if (error) return <p class="error" role="alert">{error}</p>;
  if (s === null) return <p class="muted" role="status">Loading…</p>;
  switch (section) {
    case 'users':
      return <s.UsersSettings user={user} />;
    case 'api-keys':
      return <s.ApiKeysSettings />;
    case 'webhooks':
      return <s.WebhooksSettings />;
    case 'channels':
      return <s.ChannelsSettings />;
    case 'automation':
      return <s.AutomationSettings />;
    case 'teams':
      return <s.TeamsSettings />;
    case 'canned-replies':
      return <s.CannedRepliesSettings />;
    case 'tools':
      return <s.ToolsSettings />;
    case 'credits':
      return <s.CreditsSettings />;
    default:
      return <p>No such settings page.</p>;
  }
}
