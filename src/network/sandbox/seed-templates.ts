import type { GraphTemplateDefinition } from '../graph-api.js';

/**
 * The templates every new sandbox number starts with, in the shape the
 * template API returns. `hello_world` is the one Meta gives every new
 * business; the others cover each kind of variable a send can fill: body
 * text, a media header, quick-reply, dynamic-URL, copy-code and OTP buttons.
 */
export const SANDBOX_TEMPLATES: GraphTemplateDefinition[] = [
  {
    name: 'hello_world',
    language: 'en_US',
    status: 'APPROVED',
    category: 'UTILITY',
    components: [
      { type: 'HEADER', format: 'TEXT', text: 'Hello World' },
      {
        type: 'BODY',
        text: 'Welcome and congratulations!! This message demonstrates your ability to send a WhatsApp message notification from the Cloud API, hosted by Meta. Thank you for taking the time to test with us.',
      },
      { type: 'FOOTER', text: 'WhatsApp Business Platform sample message' },
    ],
  },
  {
    name: 'order_update',
    language: 'en_US',
    status: 'APPROVED',
    category: 'UTILITY',
    components: [
      { type: 'BODY', text: 'Hi {{1}}, your order {{2}} has shipped and arrives on {{3}}.' },
      { type: 'BUTTONS', buttons: [{ type: 'QUICK_REPLY', text: 'Track my order' }, { type: 'QUICK_REPLY', text: 'Talk to an agent' }] },
    ],
  },
  {
    name: 'appointment_reminder',
    language: 'en_US',
    status: 'APPROVED',
    category: 'UTILITY',
    components: [
      { type: 'HEADER', format: 'IMAGE' },
      { type: 'BODY', text: 'Hello {{1}}, this is a reminder of your appointment on {{2}}.' },
      {
        type: 'BUTTONS',
        buttons: [
          { type: 'QUICK_REPLY', text: 'Confirm' },
          { type: 'QUICK_REPLY', text: 'Reschedule' },
          { type: 'URL', text: 'Manage booking', url: 'https://example.com/booking/{{1}}' },
        ],
      },
    ],
  },
  {
    name: 'spring_sale',
    language: 'en_US',
    status: 'APPROVED',
    category: 'MARKETING',
    components: [
      { type: 'HEADER', format: 'TEXT', text: 'Spring sale' },
      { type: 'BODY', text: 'Hi {{1}}, take {{2}} off everything until {{3}}.' },
      { type: 'BUTTONS', buttons: [{ type: 'COPY_CODE', text: 'Copy offer code' }] },
    ],
  },
  {
    name: 'verification_code',
    language: 'en_US',
    status: 'APPROVED',
    category: 'AUTHENTICATION',
    components: [
      { type: 'BODY', text: '*{{1}}* is your verification code. For your security, do not share this code.' },
      { type: 'FOOTER', text: 'This code expires in 10 minutes.' },
      { type: 'BUTTONS', buttons: [{ type: 'OTP', otp_type: 'COPY_CODE', text: 'Copy code' }] },
    ],
  },
  {
    name: 'hello_world',
    language: 'es',
    status: 'APPROVED',
    category: 'UTILITY',
    components: [{ type: 'BODY', text: '¡Hola! Este es un mensaje de prueba del sandbox.' }],
  },
  {
    name: 'winter_promo',
    language: 'en_US',
    status: 'PAUSED',
    category: 'MARKETING',
    components: [{ type: 'BODY', text: 'Winter deals are here, {{1}}!' }],
  },
];
