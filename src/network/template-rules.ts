import type { GraphTemplateComponent, GraphTemplateDefinitionComponent, GraphTemplateParameter, ParamKind, TemplateShape, TemplateSlot } from '../domain/templates.js';
import type { KnownGraphErrorCode, TemplateStatus } from './graph-api.js';

/*
 * What a template expects, and whether a send's components fit it. Pure
 * functions: the service checks sends against its registry with them before
 * anything reaches the network, and the sandbox network rejects sends with the
 * same rules and the network's own error codes.
 */

const VARIABLE = /\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g;

/** Distinct `{{n}}` / `{{name}}` placeholders of a text, in first-use order. */
export function placeholders(text: string | undefined): string[] {
  if (!text) return [];
  const seen: string[] = [];
  for (const m of text.matchAll(VARIABLE)) if (!seen.includes(m[1]!)) seen.push(m[1]!);
  return seen;
}

/**
 * Derives the slots from a template definition as the Graph API's
 * `message_templates` endpoint returns it (and as operators enter it).
 */
export function shapeFromDefinition(components: GraphTemplateDefinitionComponent[]): TemplateShape {
  const slots: TemplateSlot[] = [];
  const shape: TemplateShape = { slots, buttons: [] };
  for (const c of components) {
    const type = c.type.toUpperCase();
    if (type === 'HEADER') {
      const format = (c.format ?? 'TEXT').toUpperCase();
      if (format === 'TEXT') {
        shape.headerText = c.text;
        const n = placeholders(c.text).length;
        if (n > 0) slots.push({ component: 'header', params: Array(n).fill('textual'), optional: false });
      } else if (format === 'IMAGE' || format === 'VIDEO' || format === 'DOCUMENT' || format === 'LOCATION') {
        slots.push({ component: 'header', params: [format.toLowerCase() as ParamKind], optional: false });
      }
    } else if (type === 'BODY') {
      shape.bodyText = c.text;
      const n = placeholders(c.text).length;
      if (n > 0) slots.push({ component: 'body', params: Array(n).fill('textual'), optional: false });
    } else if (type === 'FOOTER') {
      shape.footerText = c.text;
    } else if (type === 'BUTTONS') {
      (c.buttons ?? []).forEach((b, index) => {
        const btype = b.type.toUpperCase();
        shape.buttons.push({ type: btype, text: b.text ?? '', index });
        if (btype === 'QUICK_REPLY') slots.push({ component: 'button', index, subType: 'quick_reply', params: ['payload'], optional: true });
        else if (btype === 'URL' && placeholders(b.url).length > 0) slots.push({ component: 'button', index, subType: 'url', params: ['url_text'], optional: false });
        else if (btype === 'OTP') slots.push({ component: 'button', index, subType: 'url', params: ['url_text'], optional: false });
        else if (btype === 'COPY_CODE') slots.push({ component: 'button', index, subType: 'copy_code', params: ['coupon_code'], optional: false });
        else if (btype === 'FLOW') slots.push({ component: 'button', index, subType: 'flow', params: ['action'], optional: true });
      });
    }
  }
  return shape;
}

/** A reason a send does not fit its template, with the network's error code for it. */
export interface TemplateIssue {
  code: KnownGraphErrorCode;
  /** Where in the request: `template.components[1].parameters[0]`. */
  path: string;
  message: string;
}

function accepts(kind: ParamKind, p: GraphTemplateParameter): boolean {
  switch (kind) {
    case 'textual':
      return p.type === 'text' || p.type === 'currency' || p.type === 'date_time';
    case 'image':
    case 'video':
    case 'document':
      return p.type === kind;
    case 'location':
      return (p.type as string) === 'location';
    case 'payload':
      return p.type === 'payload';
    case 'url_text':
      return p.type === 'text';
    case 'coupon_code':
      return p.type === 'coupon_code';
    case 'action':
      return p.type === 'action';
  }
}

function slotLabel(s: TemplateSlot): string {
  return s.component === 'button' ? `button ${s.index} (${s.subType})` : s.component;
}

/**
 * Checks a send's components against the template's slots: every required
 * slot filled, no component the template does not have, the number of
 * parameters equal to the number of variables (132000), and each parameter of
 * an accepted type (132012). Returns every issue found; empty means it fits.
 */
export function checkTemplateComponents(shape: TemplateShape, components: GraphTemplateComponent[] | undefined): TemplateIssue[] {
  const issues: TemplateIssue[] = [];
  const given = components ?? [];
  const used = new Set<TemplateSlot>();
  given.forEach((c, i) => {
    const path = `template.components[${i}]`;
    const slot = shape.slots.find((s) =>
      c.type === 'button' ? s.component === 'button' && s.index === Number(c.index) : s.component === c.type,
    );
    if (slot === undefined) {
      if (c.type === 'button') {
        const exists = shape.buttons.some((b) => b.index === Number(c.index));
        issues.push({
          code: exists ? 132000 : 131009,
          path,
          message: exists
            ? `button ${c.index} of the template takes no parameters`
            : `the template has no button at index ${c.index}`,
        });
      } else {
        issues.push({ code: 132000, path, message: `the template's ${c.type} takes no parameters` });
      }
      return;
    }
    if (used.has(slot)) {
      issues.push({ code: 100, path, message: `${slotLabel(slot)} is given more than once` });
      return;
    }
    used.add(slot);
    if (c.type === 'button' && c.sub_type !== slot.subType) {
      issues.push({ code: 131009, path: `${path}.sub_type`, message: `button ${slot.index} is a ${slot.subType} button, not ${c.sub_type}` });
      return;
    }
    if (c.parameters.length !== slot.params.length) {
      issues.push({
        code: 132000,
        path: `${path}.parameters`,
        message: `${slotLabel(slot)} expects ${slot.params.length} parameter(s), got ${c.parameters.length}`,
      });
      return;
    }
    c.parameters.forEach((p, j) => {
      const kind = slot.params[j]!;
      if (!accepts(kind, p)) {
        issues.push({
          code: 132012,
          path: `${path}.parameters[${j}].type`,
          message: `${slotLabel(slot)} parameter ${j + 1} must be ${describeKind(kind)}, got ${p.type}`,
        });
      }
    });
  });
  for (const slot of shape.slots) {
    if (slot.optional || used.has(slot)) continue;
    issues.push({
      code: slot.component === 'button' ? 131008 : 132000,
      path: 'template.components',
      message: `${slotLabel(slot)} expects ${slot.params.length} parameter(s), got none`,
    });
  }
  return issues;
}

function describeKind(kind: ParamKind): string {
  switch (kind) {
    case 'textual':
      return 'text, currency or date_time';
    case 'url_text':
      return 'text';
    default:
      return kind;
  }
}

/** Why a template cannot be sent at all, before its parameters are looked at. */
export function templateStatusIssue(status: TemplateStatus | string): { code: KnownGraphErrorCode; message: string } | null {
  switch (status) {
    case 'APPROVED':
      return null;
    case 'PAUSED':
      return { code: 132015, message: 'the template is paused' };
    case 'DISABLED':
      return { code: 132016, message: 'the template is disabled' };
    default:
      return { code: 132001, message: `the template is not approved (status ${status})` };
  }
}

function paramText(p: GraphTemplateParameter): string {
  switch (p.type) {
    case 'text':
      return p.text;
    case 'currency':
      return p.currency.fallback_value;
    case 'date_time':
      return p.date_time.fallback_value;
    default:
      return '';
  }
}

/** Fills `{{n}}` placeholders with the parameters' display values (for history and previews). */
export function renderText(text: string | undefined, params: GraphTemplateParameter[] | undefined): string | undefined {
  if (text === undefined) return undefined;
  const names = placeholders(text);
  return text.replace(VARIABLE, (whole, name: string) => {
    const i = names.indexOf(name);
    const p = params?.[i];
    return p === undefined ? whole : paramText(p);
  });
}

/** The body text of a template send with its parameters filled in. */
export function renderTemplateBody(shape: TemplateShape, components: GraphTemplateComponent[] | undefined): string | undefined {
  const body = components?.find((c) => c.type === 'body');
  return renderText(shape.bodyText, body?.parameters);
}

/** A template send as the customer's phone shows it: the template's texts with the send's parameters filled in, and its buttons. */
export interface RenderedTemplate {
  header?: { text: string } | { media: 'image' | 'video' | 'document' | 'location'; link?: string };
  body?: string;
  footer?: string;
  buttons: { type: 'quick_reply' | 'url' | 'phone_number' | 'copy_code' | 'flow' | 'otp' | 'other'; text: string; url?: string; phoneNumber?: string; code?: string }[];
}

const BUTTON_TYPES = new Set(['quick_reply', 'url', 'phone_number', 'copy_code', 'flow', 'otp']);

function mediaLink(p: GraphTemplateParameter | undefined): string | undefined {
  if (p === undefined) return undefined;
  const m = p.type === 'image' ? p.image : p.type === 'video' ? p.video : p.type === 'document' ? p.document : undefined;
  return m?.link;
}

/**
 * Renders a template send from the template's definition, as the network
 * delivers it: header, body and footer with their variables filled, media
 * headers by kind and link, URL buttons with their suffix, copy-code buttons
 * with their code. A variable the send left out stays `{{n}}`.
 */
export function renderTemplateMessage(definition: GraphTemplateDefinitionComponent[], components: GraphTemplateComponent[] | undefined): RenderedTemplate {
  const out: RenderedTemplate = { buttons: [] };
  const params = (type: 'header' | 'body') => components?.find((c) => c.type === type)?.parameters;
  for (const c of definition) {
    const type = c.type.toUpperCase();
    if (type === 'HEADER') {
      const format = (c.format ?? 'TEXT').toUpperCase();
      if (format === 'TEXT') out.header = { text: renderText(c.text, params('header')) ?? '' };
      else if (format === 'IMAGE' || format === 'VIDEO' || format === 'DOCUMENT' || format === 'LOCATION') {
        const link = mediaLink(params('header')?.[0]);
        out.header = { media: format.toLowerCase() as 'image' | 'video' | 'document' | 'location', ...(link !== undefined ? { link } : {}) };
      }
    } else if (type === 'BODY') {
      out.body = renderText(c.text, params('body'));
    } else if (type === 'FOOTER') {
      out.footer = c.text;
    } else if (type === 'BUTTONS') {
      (c.buttons ?? []).forEach((b, index) => {
        const given = components?.find((x) => x.type === 'button' && Number(x.index) === index)?.parameters[0];
        const btype = b.type.toLowerCase();
        const button: RenderedTemplate['buttons'][number] = { type: BUTTON_TYPES.has(btype) ? (btype as RenderedTemplate['buttons'][number]['type']) : 'other', text: b.text ?? '' };
        if (btype === 'url' && b.url !== undefined) button.url = renderText(b.url, given ? [given] : undefined);
        if (btype === 'phone_number' && b.phone_number !== undefined) button.phoneNumber = b.phone_number;
        if (btype === 'copy_code' && given?.type === 'coupon_code') button.code = given.coupon_code;
        if (btype === 'otp' && given?.type === 'text') button.code = given.text;
        out.buttons.push(button);
      });
    }
  }
  return out;
}
