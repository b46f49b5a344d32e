import type { ErrorRequestHandler, Response } from 'express';
import { ZodError } from 'zod';
import { AppError } from '../errors.js';
import type { Logger } from '../log.js';
import { MAX_JSON_DEPTH } from '../json-depth.js';
import { renderMessage } from '../validation-messages.js';

export function sendError(res: Response, err: AppError): void {
  if (err.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(Math.max(1, Math.ceil(err.retryAfterSeconds))));
  if (err.status === 401) res.setHeader('WWW-Authenticate', 'Bearer realm="switchboard"');
  const error: Record<string, unknown> = { code: err.code, message: err.message };
  if (err.details !== undefined) error.details = err.details;
  res.status(err.status).json({ success: false, error, ...err.extra });
}

/**
 * Zod issues as `details`: one entry per failing field, `field` the
 * machine-readable path (`body.template.language.code`), `message` in the
 * caller's words when the parse used `inUserWords` (src/validation-messages.ts).
 * The error's own message is those messages, the first few.
 */
export function validationError(e: ZodError, where: 'body' | 'query' | 'params'): AppError {
  const details = e.issues.map((i) => ({ field: [where, ...i.path.map(String)].join('.'), message: renderMessage(i.message, i.path, where), code: i.code }));
  const shown = details.slice(0, 3).map((d) => d.message);
  if (details.length > shown.length) shown.push(`and ${details.length - shown.length} more (see details)`);
  return new AppError(400, 'validation_failed', shown.length > 0 ? shown.join('; ') : 'invalid request', details);
}

/** PostgreSQL's codes for text it cannot take: untranslatable_character (`\u0000` in jsonb), character_not_in_repertoire (NUL in text). */
const UNSTORABLE_TEXT_CODES = new Set(['22P05', '22021']);

interface BodyParserError extends Error {
  type?: string;
  status?: number;
}

/**
 * The one error mapper. AppErrors keep their status and code; body-parser
 * failures become 400/413/415; anything else is logged with its stack and
 * answered with a bare 500 that leaks nothing.
 */
export function errorHandler(log: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (err instanceof AppError) return sendError(res, err);
    if (err instanceof ZodError) return sendError(res, validationError(err, 'body'));
    const bp = err as BodyParserError;
    switch (bp?.type) {
      case 'entity.parse.failed':
        return sendError(res, new AppError(400, 'invalid_json', 'the request body is not valid JSON'));
      case 'entity.too.deep':
        return sendError(res, new AppError(400, 'json_too_deep', `the JSON body nests deeper than ${MAX_JSON_DEPTH} levels`));
      case 'entity.too.large':
        return sendError(res, new AppError(413, 'payload_too_large', 'the request body is too large'));
      case 'encoding.unsupported':
      case 'charset.unsupported':
        return sendError(res, new AppError(415, 'unsupported_media_type', bp.message));
      case 'request.aborted':
        return;
    }
    // PostgreSQL refusing text (U+0000, an unpaired surrogate) that got past the checks where requests come in.
    if (UNSTORABLE_TEXT_CODES.has((err as { code?: unknown })?.code as string)) {
      log.warn('text no store keeps reached the store', { err, method: req.method, path: req.path, requestId: res.locals.requestId });
      return sendError(res, new AppError(400, 'validation_failed', 'the request holds text that cannot be stored (U+0000 or an unpaired surrogate)'));
    }
    if (typeof bp?.status === 'number' && bp.status >= 400 && bp.status < 500) {
      return sendError(res, new AppError(bp.status, 'bad_request', 'the request could not be read'));
    }
    log.error('unhandled error', { err, method: req.method, path: req.path, requestId: res.locals.requestId });
    sendError(res, new AppError(500, 'internal_error', 'something went wrong on our side; the request id is in X-Request-Id'));
  };
}
