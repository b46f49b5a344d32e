import type { z } from 'zod';
import type { Principal } from '../domain/types.js';
import type { Scope } from '../domain/scopes.js';
import type { Logger } from '../log.js';

/** What a tool runs with: the caller's own principal, nothing shared with other callers. */
export interface ToolContext {
  principal: Principal;
  log: Logger;
  requestId: string;
  /** Aborted when the client goes away or cancels the call. */
  signal: AbortSignal;
  /** What the server was bound to for this request (a connected tool's session); absent on the platform server. */
  target?: unknown;
}

/** The MCP tool annotations (all hints; clients must not trust them for security). */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  /** True when the tool reaches beyond this service (a message to a real person on the chat network). */
  openWorldHint: boolean;
}

/**
 * One MCP tool. `input` validates and documents the arguments (its JSON
 * Schema is the tool's `inputSchema`); `output` documents `structuredContent`
 * (the tool's `outputSchema`). `run` returns the structured result; it
 * throws `AppError` for failures the model can act on (they become
 * `isError: true` results), anything else is a logged internal error.
 */
export interface ToolDef<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  /** Written for a language model: when to use the tool, what it returns, what it needs. */
  description: string;
  /** Scopes the API key needs (for listings; the application services enforce them). */
  scopes: readonly Scope[];
  input: I;
  output: O;
  annotations: ToolAnnotations;
  run(ctx: ToolContext, args: z.output<I>): Promise<z.input<O>>;
}

/** Identity function that keeps the schema types flowing into `run`. */
export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(def: ToolDef<I, O>): ToolDef {
  return def as unknown as ToolDef;
}
