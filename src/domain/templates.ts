/*
 * Template record shapes: what a send fills a template with (the network's
 * wire shape, kept verbatim in the session message that sent it), how the
 * network describes a template, and the shape the registry derives from that
 * description. Plain data; the rules over them live in
 * src/network/template-rules.ts and the zod schemas that parse them in
 * src/network/graph-api.ts.
 */

/** A media object: exactly one of `link` (HTTPS) or `id` (uploaded media). */
export interface GraphMedia {
  link?: string;
  id?: string;
  caption?: string;
  filename?: string;
}

/** One value a send gives a template variable. */
export type GraphTemplateParameter =
  | { type: 'text'; text: string; parameter_name?: string }
  | { type: 'currency'; currency: { fallback_value: string; code: string; amount_1000: number } }
  | { type: 'date_time'; date_time: { fallback_value: string } & Record<string, unknown> }
  | { type: 'image'; image: GraphMedia }
  | { type: 'video'; video: GraphMedia }
  | { type: 'document'; document: GraphMedia }
  | { type: 'audio'; audio: GraphMedia }
  | { type: 'payload'; payload: string }
  | { type: 'coupon_code'; coupon_code: string }
  | { type: 'action'; action: { flow_token?: string; flow_action_data?: Record<string, unknown> } };

/** One component of a template send: the parameters of its header, body or a button. */
export type GraphTemplateComponent =
  | { type: 'header' | 'body'; parameters: GraphTemplateParameter[] }
  | {
      type: 'button';
      sub_type: 'quick_reply' | 'url' | 'copy_code' | 'flow';
      index: number | string;
      parameters: GraphTemplateParameter[];
    };

/** A button of a template's definition as the network describes it; fields it adds beyond these are kept. */
export interface GraphTemplateDefinitionButton {
  type: string;
  text?: string | undefined;
  url?: string | undefined;
  phone_number?: string | undefined;
  otp_type?: string | undefined;
  example?: string[] | undefined;
  [field: string]: unknown;
}

/** One component (HEADER / BODY / FOOTER / BUTTONS) of a template's definition; fields the network adds beyond these are kept. */
export interface GraphTemplateDefinitionComponent {
  type: string;
  format?: string | undefined;
  text?: string | undefined;
  buttons?: GraphTemplateDefinitionButton[] | undefined;
  [field: string]: unknown;
}

/** The kinds of value a template variable accepts. */
export type ParamKind = 'textual' | 'image' | 'video' | 'document' | 'location' | 'payload' | 'url_text' | 'coupon_code' | 'action';

/** One slot of the template that takes parameters in a send. */
export interface TemplateSlot {
  component: 'header' | 'body' | 'button';
  /** Button position, zero-based (buttons only). */
  index?: number;
  /** How a send addresses this button (buttons only). */
  subType?: 'quick_reply' | 'url' | 'copy_code' | 'flow';
  /** Parameter kinds, one per variable, in order. */
  params: ParamKind[];
  /** A slot that may be left out of the send (quick-reply payloads, flow tokens). */
  optional: boolean;
}

/** The template as the registry keeps it: enough to validate and render sends. */
export interface TemplateShape {
  slots: TemplateSlot[];
  headerText?: string;
  bodyText?: string;
  footerText?: string;
  /** Button labels in order, for rendering and quick-reply taps. */
  buttons: { type: string; text: string; index: number }[];
}
