import { z } from 'zod';
import type { McpGateway } from '../../mcp/index.js';
import { errorSchema } from '../../app/schemas.js';
import { defineRoute, type RouteDef } from '../route.js';

const integrationSchema = z.object({
  id: z.string().describe('the integration ID; for the platform, the `{id}` of `{mcp_url}/mcp/{id}`'),
  name: z.string(),
  description: z.string(),
  connect: z
    .enum(['none', 'oauth', 'api_key'])
    .describe('`none`: works at once with the caller\'s API key; `oauth`: POST …/connect, then the user signs in at `redirect_url`; `api_key`: POST …/connect with the provider\'s key in `data`'),
  mcp_url: z.string().describe('the URL to give an MCP client (Streamable HTTP, `Authorization: Bearer <API key>` with scope mcp:access); `{tool_id}` for integrations used through a connected tool'),
  tools: z.array(
    z.object({
      name: z.string(),
      title: z.string(),
      description: z.string(),
      scopes: z.array(z.string()).describe('scopes the API key needs for this tool'),
      annotations: z.object({ readOnlyHint: z.boolean(), destructiveHint: z.boolean(), idempotentHint: z.boolean(), openWorldHint: z.boolean() }),
      inputSchema: z.record(z.string(), z.unknown()).describe('the JSON Schema of the tool\'s arguments'),
    }),
  ),
});

/**
 * `GET /v1/integrations`. `mcpBaseUrl(req)` says where the gateway is
 * reached: MCP_PUBLIC_URL, else the REST listener's own address (same
 * listener) or its host with the MCP port (separate listener).
 */
export function integrationRoutes(gateway: McpGateway, mcpBaseUrl: (req: { protocol: string; hostname: string; host: string }) => string): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/integrations',
      operationId: 'listIntegrations',
      summary: 'List integrations and their tools (actions)',
      tag: 'Tool gateway',
      auth: 'apiKey',
      scope: 'mcp:access',
      responses: {
        200: { description: 'the integrations this key can use', schema: z.object({ integrations: z.array(integrationSchema) }) },
        403: { description: 'the key lacks mcp:access', schema: errorSchema },
      },
      handler: ({ req }) => ({ body: { integrations: gateway.integrations(mcpBaseUrl({ protocol: req.protocol, hostname: req.hostname, host: req.get('host') ?? req.hostname })) } }),
    }),
  ];
}
