export * from './graph-api.js';
export { GraphApiNetwork, type GraphApiOptions } from './graph-adapter.js';
export { MediaTooLargeError, NetworkRejectedError, NetworkUnavailableError, networkAccountOf, type ChatNetwork, type NetworkAccount, type NetworkMedia, type NetworkRejection, type SendOutcome } from './port.js';
export { parseWebhook, networkEventKey, errorDetailsFrom, type CustomerIdentity, type IdentityChange, type InboundMessageEvent, type NetworkEvent, type ParsedWebhook, type StatusEvent } from './inbound.js';
export { HUB_SIGNATURE_HEADER, signHubSignature, verifyHubSignature } from './signature.js';
export {
  checkTemplateComponents,
  placeholders,
  renderTemplateBody,
  renderTemplateMessage,
  renderText,
  shapeFromDefinition,
  templateStatusIssue,
  type RenderedTemplate,
  type TemplateIssue,
} from './template-rules.js';
