import { describe, expect, it } from 'vitest';
import { AppError, insufficientScope, notFound } from '../../src/errors.js';
import { checkOrigin, rebindingPolicy, toolErrorText } from '../../src/mcp/index.js';

describe('toolErrorText: errors a model can act on', () => {
  it('names the missing scope and says retrying will not help', () => {
    const t = toolErrorText(insufficientScope('tickets:create'));
    expect(t).toContain('Error (insufficient_scope): this API key lacks the scope tickets:create.');
    expect(t).toContain('Do not retry');
  });

  it('tells which identifier to check for each kind of missing thing', () => {
    expect(toolErrorText(notFound('ticket'))).toContain('list_tickets');
    expect(toolErrorText(notFound('contact'))).toContain('<phone>:<phone number id>');
    expect(toolErrorText(notFound('session'))).toContain('audienceExternalId');
  });

  it('sends the model to a template outside the 24-hour window, and to waiting during a handover', () => {
    expect(toolErrorText(new AppError(422, 'outside_customer_service_window', 'the customer has not written in 24 hours'))).toMatch(/send an approved template instead/);
    expect(toolErrorText(new AppError(409, 'conversation_with_agent', 'a human agent has the conversation'))).toMatch(/Wait until/);
  });

  it('lists failing fields, falls back on the status class, and carries the network error details', () => {
    expect(toolErrorText(new AppError(400, 'invalid_template_parameters', 'bad', [{ field: 'components.0', message: 'too few' }]))).toContain('components.0: too few');
    expect(toolErrorText(new AppError(503, 'mailbox_full', 'busy', undefined, { retryAfterSeconds: 3 }))).toContain('try again in 3 seconds');
    expect(toolErrorText(new AppError(429, 'rate_limited', 'slow down', undefined, { retryAfterSeconds: 20 }))).toContain('wait 20 seconds');
    const rejected = new AppError(502, 'network_rejected', 'rejected', undefined, { extra: { errorDetails: { code: 131026, title: 'Undeliverable', message: 'x' } } });
    expect(toolErrorText(rejected)).toContain('131026');
  });
});

describe('DNS-rebinding policy', () => {
  const policy = rebindingPolicy({ publicUrls: ['https://support.example.com', undefined] });

  it('allows loopback and the public URL hosts by default', () => {
    expect([...policy.hosts].sort()).toEqual(['127.0.0.1', '[::1]', 'localhost', 'support.example.com']);
  });

  it('accepts requests without Origin, loopback origins on any port and the public origin', () => {
    for (const o of [undefined, 'http://localhost:6274', 'http://127.0.0.1:3000', 'http://[::1]:8080', 'https://support.example.com']) expect(checkOrigin(policy, o).ok, String(o)).toBe(true);
  });

  it('refuses any other origin, the null origin and garbage', () => {
    for (const o of ['https://evil.example.com', 'http://support.example.com', 'https://support.example.com.evil.io', 'null', 'not a url']) expect(checkOrigin(policy, o).ok, o).toBe(false);
  });

  it('uses exactly the configured lists when given', () => {
    const strict = rebindingPolicy({ allowedHosts: ['mcp.example.com'], allowedOrigins: ['https://app.example.com'], publicUrls: ['https://support.example.com'] });
    expect([...strict.hosts]).toEqual(['mcp.example.com']);
    expect(checkOrigin(strict, 'https://app.example.com').ok).toBe(true);
    expect(checkOrigin(strict, 'http://localhost:3000').ok).toBe(false);
    expect(checkOrigin(strict, 'https://support.example.com').ok).toBe(false);
  });
});
