import type { Request, Response } from 'express';
import type { z } from 'zod';
import type { Principal } from '../domain/types.js';
import type { Scope } from '../domain/scopes.js';
import type { Logger } from '../log.js';

export type HttpMethod = 'get' | 'post' | 'patch' | 'put' | 'delete';

export interface RouteContext<B, Q, P> {
  body: B;
  query: Q;
  params: P;
  /** Present on `auth: 'apiKey'` and `auth: 'session'` routes. */
  principal: Principal;
  req: Request;
  res: Response;
  log: Logger;
  requestId: string;
}

export interface RouteResult {
  status?: number;
  /** Sent as JSON, or as bytes when a Buffer. */
  body?: unknown;
  headers?: Record<string, string>;
}

/**
 * One endpoint: how it is authenticated, what it accepts (zod schemas that
 * both validate the request and document it in OpenAPI), and its handler.
 * Handlers return data; the route table turns it into a response and turns
 * thrown errors into the error shape.
 */
export interface RouteDef<B extends z.ZodType = z.ZodType, Q extends z.ZodType = z.ZodType, P extends z.ZodType = z.ZodType> {
  method: HttpMethod;
  /** Express-style path, `/v1/tickets/:ticketId`. */
  path: string;
  /**
   * The operation's name in OpenAPI: unique, camelCase, and stable, because
   * client generators name their methods after it (renaming one breaks
   * every generated client). Not derived from the path for that reason.
   */
  operationId: string;
  summary: string;
  tag: string;
  /**
   * `apiKey`: a bearer API key, or the dashboard session cookie (with CSRF on
   * unsafe methods); `session`: the session cookie only; `operator`: the
   * operator token; `none`: public.
   */
  auth: 'apiKey' | 'session' | 'operator' | 'none';
  /** Checked before the body is validated, so a key without it gets 403 whatever it sent. */
  scope?: Scope;
  body?: B;
  /** The largest JSON body this route reads, in bytes, when it is not BODY_LIMIT (a file sent as base64). */
  bodyLimit?: number;
  /**
   * The handler reads the signed raw body and makes text no store keeps
   * storable itself (`storableCopy`), instead of the body being refused with
   * 400: a network's webhook refused would be redelivered for days and
   * then lost.
   */
  keepsUnstorableText?: boolean;
  /**
   * The request body `/docs` shows and its try-it sends: realistic, valid
   * against `body` (checked by test/http/openapi-examples.test.ts), and
   * answered 2xx by a fresh demo organization once its ids (EXAMPLE_IDS in
   * openapi-examples.ts) are the reader's. Without it one is built from the
   * schema.
   */
  example?: z.input<B>;
  query?: Q;
  params?: P;
  /** `schema` documents a JSON body; `file` a binary one (the handler returns a Buffer body and its content-type header). */
  responses: Record<number, { description: string; schema?: z.ZodType; file?: true }>;
  deprecated?: { successor: string };
  /**
   * Runs after authentication and the scope check, before params, query and
   * body are read: for per-key rate limits, which count every request. May
   * set headers; throw to refuse.
   */
  preValidate?(ctx: { principal: Principal; req: Request; res: Response }): Promise<void>;
  /** Any failure (authentication, validation, handler) is answered with a bare 500: the deprecated /v1/wa/template contract. */
  opaqueFailures?: boolean;
  /** Produces the response from the validated request; throws an AppError to refuse. */
  handler(ctx: RouteContext<z.output<B>, z.output<Q>, z.output<P>>): Promise<RouteResult> | RouteResult;
}

/** Identity function that keeps the schema types flowing into the handler. */
export function defineRoute<B extends z.ZodType = z.ZodUnknown, Q extends z.ZodType = z.ZodUnknown, P extends z.ZodType = z.ZodUnknown>(
  def: RouteDef<B, Q, P>,
): RouteDef {
  return def as unknown as RouteDef;
}
