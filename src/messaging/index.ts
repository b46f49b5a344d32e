export { Messaging, SANDBOX_GRAPH_PATH, type MessagingOpenDeps } from './module.js';
export { conversationGateway } from './gateway.js';
export { MessagingService, audienceExternalIdOf, type AgentSend, type ConversationGateway, type MessagingServiceDeps, type TemplateSendObserver, type TemplateSendOutcome, type TemplateSendResult } from './service.js';
export {
  ChannelService,
  createChannelBody,
  patchChannelBody,
  templateBody,
  templateView,
  topUpBody,
  updateChannelBody,
  webhookPath,
  type ChannelView,
  type CreateChannelBody,
  type PatchChannelBody,
  type TemplateBody,
  type TemplateView,
  type UpdateChannelBody,
} from './channels.js';
export { NetworkWebhookReceiver, type ReceiveResult } from './webhook-receiver.js';
export * from './requests.js';
export type * from './events.js';
export { SandboxCustomer, type PhoneMessage } from './sandbox-customer.js';
export { routingPatch, routingView, mergeRouting, type RoutingPatch } from './routing-settings.js';
