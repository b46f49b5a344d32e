import { describe, expect, it } from 'vitest';
import { nextStatus, type MessageStatus } from '../../src/domain/message-status.js';
import { customerServiceWindow, laterInbound } from '../../src/domain/service-window.js';
import { checkTemplateComponents, renderTemplateBody, renderTemplateMessage, shapeFromDefinition, templateStatusIssue } from '../../src/network/template-rules.js';
import { SANDBOX_TEMPLATES } from '../../src/network/sandbox/index.js';
import type { GraphTemplateComponent } from '../../src/domain/templates.js';

const H = 3600_000;

describe('24-hour customer service window', () => {
  const at = Date.parse('2030-01-01T10:00:00Z');
  it('is closed when the customer never wrote', () => {
    expect(customerServiceWindow(null, new Date(at))).toEqual({ open: false, closedAt: null });
  });
  it('is open for 24 hours after the last customer message, then closed with the time it closed', () => {
    const last = new Date(at).toISOString();
    expect(customerServiceWindow(last, new Date(at + 23 * H))).toEqual({ open: true, closesAt: new Date(at + 24 * H).toISOString() });
    expect(customerServiceWindow(last, new Date(at + 24 * H - 1)).open).toBe(true);
    expect(customerServiceWindow(last, new Date(at + 24 * H))).toEqual({ open: false, closedAt: new Date(at + 24 * H).toISOString() });
  });
  it('keeps the later inbound time when reports arrive out of order', () => {
    expect(laterInbound(null, '2030-01-01T00:00:00.000Z')).toBe('2030-01-01T00:00:00.000Z');
    expect(laterInbound('2030-01-02T00:00:00.000Z', '2030-01-01T00:00:00.000Z')).toBe('2030-01-02T00:00:00.000Z');
    expect(laterInbound('2030-01-01T00:00:00.000Z', '2030-01-02T00:00:00.000Z')).toBe('2030-01-02T00:00:00.000Z');
  });
});

describe('sent message states', () => {
  it('moves forward only: accepted → sent → delivered → read', () => {
    expect(nextStatus('accepted', 'sent')).toBe('sent');
    expect(nextStatus('accepted', 'read')).toBe('read');
    expect(nextStatus('sent', 'delivered')).toBe('delivered');
    expect(nextStatus('delivered', 'read')).toBe('read');
    expect(nextStatus('read', 'delivered')).toBeNull();
    expect(nextStatus('delivered', 'sent')).toBeNull();
    expect(nextStatus('read', 'read')).toBeNull();
    expect(nextStatus('sent', 'accepted')).toBeNull();
  });
  it('fails only from accepted or sent, and failed is final', () => {
    expect(nextStatus('accepted', 'failed')).toBe('failed');
    expect(nextStatus('sent', 'failed')).toBe('failed');
    expect(nextStatus('delivered', 'failed')).toBeNull();
    expect(nextStatus('read', 'failed')).toBeNull();
    for (const s of ['sent', 'delivered', 'read', 'failed'] as MessageStatus[]) expect(nextStatus('failed', s)).toBeNull();
  });
  it('any order of reports ends in the furthest state', () => {
    const reports: MessageStatus[] = ['read', 'sent', 'delivered', 'sent', 'read'];
    let s: MessageStatus = 'accepted';
    for (const r of reports) s = nextStatus(s, r) ?? s;
    expect(s).toBe('read');
  });
});

describe('template rules', () => {
  const def = (name: string) => SANDBOX_TEMPLATES.find((t) => t.name === name && t.language === 'en_US')!.components;
  const orderUpdate = shapeFromDefinition(def('order_update'));
  const reminder = shapeFromDefinition(def('appointment_reminder'));
  const sale = shapeFromDefinition(def('spring_sale'));
  const otp = shapeFromDefinition(def('verification_code'));
  const text = (t: string) => ({ type: 'text' as const, text: t });

  it('derives the variables each component expects', () => {
    expect(orderUpdate.slots).toEqual([
      { component: 'body', params: ['textual', 'textual', 'textual'], optional: false },
      { component: 'button', index: 0, subType: 'quick_reply', params: ['payload'], optional: true },
      { component: 'button', index: 1, subType: 'quick_reply', params: ['payload'], optional: true },
    ]);
    expect(reminder.slots.map((s) => `${s.component}${s.index ?? ''}:${s.params.join(',')}:${s.optional}`)).toEqual([
      'header:image:false',
      'body:textual,textual:false',
      'button0:payload:true',
      'button1:payload:true',
      'button2:url_text:false',
    ]);
    expect(shapeFromDefinition(def('hello_world')).slots).toEqual([]);
  });

  it('accepts a send that fits, with currency and date_time in the body', () => {
    const components: GraphTemplateComponent[] = [
      { type: 'body', parameters: [text('Ann'), { type: 'currency', currency: { fallback_value: '$10', code: 'USD', amount_1000: 10000 } }, { type: 'date_time', date_time: { fallback_value: 'May 1' } }] },
      { type: 'button', sub_type: 'copy_code', index: 0, parameters: [{ type: 'coupon_code', coupon_code: 'SPRING10' }] },
    ];
    expect(checkTemplateComponents(sale, components)).toEqual([]);
    expect(renderTemplateBody(sale, components)).toBe('Hi Ann, take $10 off everything until May 1.');
    expect(checkTemplateComponents(otp, [{ type: 'body', parameters: [text('123456')] }, { type: 'button', sub_type: 'url', index: 0, parameters: [text('123456')] }])).toEqual([]);
  });

  it('reports too few and too many parameters as 132000', () => {
    expect(checkTemplateComponents(orderUpdate, [{ type: 'body', parameters: [text('a'), text('b')] }])[0]).toMatchObject({ code: 132000 });
    expect(checkTemplateComponents(orderUpdate, [{ type: 'body', parameters: [text('a'), text('b'), text('c'), text('d')] }])[0]).toMatchObject({ code: 132000 });
    expect(checkTemplateComponents(orderUpdate, undefined)[0]).toMatchObject({ code: 132000, message: 'body expects 3 parameter(s), got none' });
    expect(checkTemplateComponents(shapeFromDefinition(def('hello_world')), [{ type: 'body', parameters: [text('x')] }])[0]).toMatchObject({ code: 132000 });
  });

  it('reports a parameter of the wrong type as 132012, and a missing required button as 131008', () => {
    const issues = checkTemplateComponents(reminder, [
      { type: 'header', parameters: [{ type: 'video', video: { link: 'https://x.example/v.mp4' } }] },
      { type: 'body', parameters: [text('a'), text('b')] },
    ]);
    expect(issues.map((i) => i.code)).toEqual([132012, 131008]);
  });

  it('reports unknown buttons, wrong sub types and duplicates', () => {
    expect(checkTemplateComponents(orderUpdate, [{ type: 'body', parameters: [text('a'), text('b'), text('c')] }, { type: 'button', sub_type: 'quick_reply', index: 5, parameters: [{ type: 'payload', payload: 'x' }] }])[0]).toMatchObject({ code: 131009 });
    expect(checkTemplateComponents(orderUpdate, [{ type: 'body', parameters: [text('a'), text('b'), text('c')] }, { type: 'button', sub_type: 'url', index: 0, parameters: [text('x')] }])[0]).toMatchObject({ code: 131009 });
    const body = { type: 'body' as const, parameters: [text('a'), text('b'), text('c')] };
    expect(checkTemplateComponents(orderUpdate, [body, body])[0]).toMatchObject({ code: 100 });
  });

  it('maps review states to the network codes', () => {
    expect(templateStatusIssue('APPROVED')).toBeNull();
    expect(templateStatusIssue('PAUSED')?.code).toBe(132015);
    expect(templateStatusIssue('DISABLED')?.code).toBe(132016);
    expect(templateStatusIssue('PENDING')?.code).toBe(132001);
    expect(templateStatusIssue('REJECTED')?.code).toBe(132001);
  });

  it('renders a send as the customer sees it: header, body and footer filled, media headers, URL suffixes, codes, every button', () => {
    const def = (name: string) => SANDBOX_TEMPLATES.find((t) => t.name === name && t.language === 'en_US')!.components;
    const text = (t: string) => ({ type: 'text' as const, text: t });
    expect(renderTemplateMessage(def('order_update'), [{ type: 'body', parameters: [text('Ann'), text('A-1001'), text('Monday')] }])).toEqual({
      body: 'Hi Ann, your order A-1001 has shipped and arrives on Monday.',
      buttons: [{ type: 'quick_reply', text: 'Track my order' }, { type: 'quick_reply', text: 'Talk to an agent' }],
    });
    expect(renderTemplateMessage(def('hello_world'), undefined)).toMatchObject({ header: { text: 'Hello World' }, footer: 'WhatsApp Business Platform sample message', buttons: [] });
    const reminder = renderTemplateMessage(def('appointment_reminder'), [
      { type: 'header', parameters: [{ type: 'image', image: { link: 'https://example.com/clinic.jpg' } }] },
      { type: 'body', parameters: [text('Ann'), { type: 'date_time', date_time: { fallback_value: 'May 1, 10:00' } }] },
      { type: 'button', sub_type: 'url', index: 2, parameters: [text('B-77')] },
    ]);
    expect(reminder.header).toEqual({ media: 'image', link: 'https://example.com/clinic.jpg' });
    expect(reminder.body).toBe('Hello Ann, this is a reminder of your appointment on May 1, 10:00.');
    expect(reminder.buttons[2]).toEqual({ type: 'url', text: 'Manage booking', url: 'https://example.com/booking/B-77' });
    expect(renderTemplateMessage(def('spring_sale'), [{ type: 'button', sub_type: 'copy_code', index: 0, parameters: [{ type: 'coupon_code', coupon_code: 'SPRING10' }] }]).buttons).toEqual([{ type: 'copy_code', text: 'Copy offer code', code: 'SPRING10' }]);
    expect(renderTemplateMessage(def('verification_code'), [{ type: 'body', parameters: [text('493021')] }, { type: 'button', sub_type: 'url', index: 0, parameters: [text('493021')] }])).toEqual({
      body: '*493021* is your verification code. For your security, do not share this code.',
      footer: 'This code expires in 10 minutes.',
      buttons: [{ type: 'otp', text: 'Copy code', code: '493021' }],
    });
    // A variable the send did not fill stays visible as a placeholder.
    expect(renderTemplateMessage(def('order_update'), undefined).body).toBe('Hi {{1}}, your order {{2}} has shipped and arrives on {{3}}.');
  });
});
