import { z } from 'zod';
import { ErrorCode, type CallToolResult, type ListToolsResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { isAppError } from '../errors.js';
import type { ToolContext, ToolDef } from './tool.js';
import { toolErrorText } from './tool-errors.js';
import { portableSchema } from './portable-schema.js';
import { fieldName, inUserWords, namesItsField, renderMessage } from '../validation-messages.js';

function jsonSchema(s: z.ZodType, io: 'input' | 'output'): Tool['inputSchema'] {
  const json = portableSchema(z.toJSONSchema(s, { io, unrepresentable: 'any' }) as Record<string, unknown>);
  delete json.$schema;
  return json as Tool['inputSchema'];
}

/**
 * Zod issues as one line a model can act on, each naming its field as the
 * model sent it ("template.language.code is required"); a message a schema
 * states itself keeps the `field: message` form.
 */
function describeIssues(e: z.ZodError): string {
  return e.issues
    .slice(0, 10)
    .map((i) => (namesItsField(i.message) ? renderMessage(i.message, i.path, 'arguments') : `${i.path.length > 0 ? fieldName(i.path) : '(arguments)'}: ${i.message}`))
    .join('; ');
}

/**
 * The tools of one MCP server, with their listing and JSON Schemas computed
 * once at start. Per request only `call` runs: look the tool up, validate
 * the arguments with its zod schema, run it with the caller's context.
 *
 * Error contract (MCP 2025-11-25 "Error Handling"):
 * - unknown tool: a JSON-RPC error (-32602 Invalid params), thrown as
 *   `ProtocolError`;
 * - arguments that fail the input schema: an `isError: true` result naming
 *   each failing field, so the model can correct the call (SEP-1303: input
 *   validation errors are tool execution errors);
 * - the tool ran and failed (`AppError`: missing scope, not found, outside
 *   the 24-hour window...): an `isError: true` result whose text says what
 *   to do instead;
 * - anything else: logged with its stack, answered as an `isError` result
 *   that leaks nothing.
 */
export class ToolRegistry {
  readonly listResult: ListToolsResult;
  private readonly byName: Map<string, ToolDef>;

  constructor(readonly tools: readonly ToolDef[]) {
    this.byName = new Map();
    for (const t of tools) {
      if (this.byName.has(t.name)) throw new Error(`tool ${t.name} is defined twice`);
      this.byName.set(t.name, t);
    }
    this.listResult = {
      tools: tools.map((t) => ({
        name: t.name,
        title: t.title,
        description: t.description,
        inputSchema: jsonSchema(t.input, 'input'),
        outputSchema: jsonSchema(t.output, 'output'),
        annotations: { title: t.title, ...t.annotations },
      })),
    };
    // The JSON-RPC layer serializes results; a frozen listing can never be
    // changed by one request and seen by the next.
    deepFreeze(this.listResult);
  }

  /**
   * The listing a caller sees: only the tools whose scopes its key holds, so
   * a model is never offered a tool that can only refuse it. A call to a
   * tool left out is still answered (with the missing scope named).
   */
  listFor(scopes: ReadonlySet<string>): ListToolsResult {
    const allowed = new Set(this.tools.filter((t) => t.scopes.every((s) => scopes.has(s))).map((t) => t.name));
    if (allowed.size === this.tools.length) return this.listResult;
    return { tools: this.listResult.tools.filter((t) => allowed.has(t.name)) };
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  async call(ctx: ToolContext, name: string, args: Record<string, unknown> | undefined): Promise<CallToolResult> {
    const tool = this.byName.get(name);
    if (!tool) throw new ProtocolError(ErrorCode.InvalidParams, `Unknown tool: ${name}. Call tools/list for the tools of this server.`);
    const parsed = tool.input.safeParse(args ?? {}, { error: inUserWords });
    if (!parsed.success) return toolError(`Invalid arguments for tool ${name}: ${describeIssues(parsed.error)}. Fix these arguments and call ${name} again.`);
    try {
      // Through the output schema: structuredContent is exactly what outputSchema
      // promises (fields the schema does not name are dropped, never leaked).
      const structured = tool.output.parse(await tool.run(ctx, parsed.data)) as Record<string, unknown>;
      return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
    } catch (err) {
      if (isAppError(err) && err.status !== 500) return toolError(toolErrorText(err));
      ctx.log.error('tool failed', { tool: name, err, organizationId: ctx.principal.organizationId });
      return toolError(`Error (internal_error): ${name} failed on the service side (request id ${ctx.requestId}). Try again later; if it keeps failing, tell the user.`);
    }
  }
}

/**
 * A JSON-RPC error for the SDK's Protocol to answer with (it sends `code`
 * and `message` as they are). Not `McpError`: that prefixes its message
 * with "MCP error <code>:", which clients then prefix again.
 */
export class ProtocolError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'ProtocolError';
  }
}

function toolError(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

function deepFreeze(o: unknown): void {
  if (o === null || typeof o !== 'object' || Object.isFrozen(o)) return;
  Object.freeze(o);
  for (const v of Object.values(o)) deepFreeze(v);
}
