import type { Server } from 'node:http';
import type { RequestHandler } from 'express';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { EventFeed } from '../events/types.js';
import type { Logger } from '../log.js';
import type { RouteDef } from '../http/route.js';
import type { Messaging } from '../messaging/module.js';
import type { ContactRepo } from '../store/core/port.js';
import type { EphemeralBus } from '../ws/ephemeral.js';
import type { ConversationGateway } from '../messaging/service.js';
import type { VisitorNoticeBus } from './bus.js';
import { VisitorHub } from './hub.js';
import { webChatCors, widgetScript, widgetTestPage } from './http.js';
import { visitorRoutes, webChatAgentRoutes, webChatSettingsRoutes } from './routes.js';
import { WebChatService } from './service.js';
import { VisitorSocketServer } from './socket.js';

export interface WebChatDeps {
  config: Config;
  clock: Clock;
  log: Logger;
  messaging: Messaging;
  contacts: ContactRepo;
  conversations: ConversationGateway;
  /** The durable event log every node follows: agents' replies reach visitors through it. */
  feed: EventFeed;
  /** The inbox's ephemeral bus: typing both ways. */
  inboxBus: EphemeralBus;
  notices: VisitorNoticeBus;
  widgetDir?: string;
}

/**
 * Web chat, wired: the visitor service, the hub that delivers each visitor's
 * conversation on this node, the visitors' socket endpoint, their REST
 * routes (and the admin's settings routes), and the mounts for CORS and
 * `/widget.js`.
 */
export class WebChat {
  readonly service: WebChatService;
  readonly hub: VisitorHub;
  readonly sockets: VisitorSocketServer;

  constructor(private readonly d: WebChatDeps) {
    const log = d.log.child({ component: 'webchat' });
    this.hub = new VisitorHub(d.feed, d.inboxBus, d.notices, log);
    this.service = new WebChatService({
      channels: d.messaging.stores.channels,
      visitors: d.messaging.stores.visitors,
      contacts: d.contacts,
      messages: d.messaging.stores.messages,
      conversations: d.conversations,
      rateLimiter: d.messaging.stores.rateLimiter,
      clock: d.clock,
      log,
      limits: {
        visitorMessagesPerMinute: d.config.WEBCHAT_VISITOR_MESSAGES_PER_MINUTE,
        addressRequestsPerMinute: d.config.WEBCHAT_ADDRESS_REQUESTS_PER_MINUTE,
        maxMessageChars: d.config.WEBCHAT_MAX_MESSAGE_CHARS,
        maxAttachmentBytes: d.config.WEBCHAT_MAX_ATTACHMENT_BYTES,
      },
      onRevoked: (org, aeid, channelId) => this.hub.revoke(org, channelId, aeid),
    });
    this.sockets = new VisitorSocketServer({ service: this.service, hub: this.hub, log, heartbeatMs: Math.max(d.config.INBOX_HEARTBEAT_MS, 1000), recheckMs: d.config.INBOX_CREDENTIAL_RECHECK_MS });
  }

  routes(): RouteDef[] {
    return [...visitorRoutes(this.service, this.hub), ...webChatSettingsRoutes(this.d.messaging.channels, this.service), ...webChatAgentRoutes(this.service)];
  }

  mounts(): { path: string; handler: RequestHandler }[] {
    return [
      { path: '/webchat', handler: webChatCors(this.service) },
      { path: '/widget.js', handler: widgetScript(this.d.widgetDir) },
      { path: '/widget-test', handler: widgetTestPage() },
    ];
  }

  async start(server: Server): Promise<void> {
    await this.hub.start();
    this.sockets.start(server);
  }

  /** Closes the visitors' sockets (1012) so they reconnect to another node. */
  async closeSockets(): Promise<void> {
    await this.sockets.close();
  }

  async close(): Promise<void> {
    await this.sockets.close();
    await this.hub.stop();
  }
}
