import type { SessionUser } from '../api/types';
import { Refusal } from '../components/Refusal';
import { ApiKeysSettings } from '../settings/ApiKeysSettings';
import { ChannelsSettings } from '../settings/ChannelsSettings';
import { CreditsSettings } from '../settings/CreditsSettings';
import { UsersSettings } from '../settings/UsersSettings';
import { WebhooksSettings } from '../settings/WebhooksSettings';

const SECTIONS = [
  { id: 'users', label: 'Users' },
  { id: 'api-keys', label: 'API keys' },
  { id: 'webhooks', label: 'Webhooks' },
  { id: 'channels', label: 'Channels & templates' },
  { id: 'credits', label: 'Credits' },
] as const;

/** The organization's settings, for admins only (the API refuses agents too). */
export function SettingsScreen({ user, section }: { user: SessionUser; section: string }) {
  if (user.role !== 'admin') {
    return (
      <Refusal title="Settings are for admins">
        <p>Your account is an agent account. An admin of your organization can change users, keys, webhooks and channels.</p>
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
        {section === 'users' && <UsersSettings user={user} />}
        {section === 'api-keys' && <ApiKeysSettings />}
        {section === 'webhooks' && <WebhooksSettings />}
        {section === 'channels' && <ChannelsSettings />}
        {section === 'credits' && <CreditsSettings />}
        {!SECTIONS.some((s) => s.id === section) && <p>No such settings page.</p>}
      </div>
    </div>
  );
}
