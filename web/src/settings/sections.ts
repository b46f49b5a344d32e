/*
 * Every settings section, loaded as one chunk when an admin first opens the
 * settings: agents, who never see them, never download them.
 */
export { ApiKeysSettings } from './ApiKeysSettings';
export { AutomationSettings } from './AutomationSettings';
export { CannedRepliesSettings } from './CannedRepliesSettings';
export { ChannelsSettings } from './ChannelsSettings';
export { CreditsSettings } from './CreditsSettings';
export { TeamsSettings } from './TeamsSettings';
export { ToolsSettings } from './ToolsSettings';
export { UsersSettings } from './UsersSettings';
export { WebhooksSettings } from './WebhooksSettings';
