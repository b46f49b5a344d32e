import { describe, expect, it } from 'vitest';
import { assignAgent, currentSession, isWithHuman, openHandover, requestHandover, type HandoverState } from '../../src/actors/index.js';
import { isWithinServiceWindow, serviceWindowClosesAt } from '../../src/domain/service-window.js';

const now = new Date('2030-05-01T10:00:00Z');
const bot: HandoverState = { status: 'bot' };
const queued: HandoverState = { status: 'queued', requestedAt: '2030-05-01T09:00:00.000Z' };
const agent: HandoverState = { status: 'agent', agentId: 'u1', assignedAt: '2030-05-01T09:30:00.000Z' };

describe('handover transitions', () => {
  it('bot → queued on request, stamped with the time', () => {
    expect(requestHandover(bot, now)).toEqual({ ok: true, next: { status: 'queued', requestedAt: now.toISOString() } });
  });

  it('refuses a request while one is pending or an agent has it', () => {
    expect(requestHandover(queued, now)).toEqual({ ok: false, reason: 'already_queued' });
    expect(requestHandover(agent, now)).toEqual({ ok: false, reason: 'with_agent' });
  });

  it('queued or agent → bot on open; refused when the bot already has it', () => {
    expect(openHandover(queued)).toEqual({ ok: true, next: { status: 'bot' } });
    expect(openHandover(agent)).toEqual({ ok: true, next: { status: 'bot' } });
    expect(openHandover(bot)).toEqual({ ok: false, reason: 'already_with_bot' });
  });

  it('an agent picks up a queued conversation; the same agent again changes nothing', () => {
    const t = assignAgent(queued, 'u2', now);
    expect(t).toEqual({ ok: true, next: { status: 'agent', agentId: 'u2', assignedAt: now.toISOString() } });
    expect(assignAgent(agent, 'u1', now)).toEqual({ ok: true, next: agent });
  });

  it('is with a human while queued or with an agent', () => {
    expect([bot, queued, agent].map(isWithHuman)).toEqual([false, true, true]);
  });
});

describe('24-hour window', () => {
  it('is open for 24 h after the last inbound message, closed before any', () => {
    expect(isWithinServiceWindow(null, now)).toBe(false);
    expect(isWithinServiceWindow('2030-04-30T10:00:01.000Z', now)).toBe(true);
    expect(isWithinServiceWindow('2030-04-30T10:00:00.000Z', now)).toBe(false);
    expect(serviceWindowClosesAt('2030-04-30T10:00:00.000Z')?.toISOString()).toBe('2030-05-01T10:00:00.000Z');
  });
});

describe('current session', () => {
  it('keeps an open session and opens a new one otherwise', () => {
    const open = { id: 's1', status: 'open' as const, openedAt: '2030-05-01T08:00:00.000Z' };
    expect(currentSession({ session: open }, now, 's2')).toBe(open);
    expect(currentSession({ session: null }, now, 's2')).toEqual({ id: 's2', status: 'open', openedAt: now.toISOString() });
    expect(currentSession({ session: { ...open, status: 'resolved' } }, now, 's3').id).toBe('s3');
  });
});
