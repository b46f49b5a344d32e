import { z } from 'zod';
import { FIRST_RESPONDERS, isTimeZone, SLA_CLOCKS, WEEKDAYS, type BusinessHours, type ChannelRouting, type ResponseSeconds, type Weekday } from '../domain/routing.js';
import { TICKET_PRIORITIES, type TicketPriority } from '../domain/types.js';

/*
 * A channel's routing settings as the API takes and shows them. A PATCH
 * replaces each field it names (`autoAssign` and `sla` key by key, and
 * `sla.byPriority` priority by priority; `businessHours` whole, or null to
 * switch them off) and leaves the others as they were.
 */

const hhmm = z.string().regex(/^([01][0-9]|2[0-3]):[0-5][0-9]$|^24:00$/, 'a local time HH:MM (00:00 to 24:00)');
const opening = z
  .object({ from: hhmm, to: hhmm })
  .strict()
  .refine((o) => o.to > o.from, { message: 'to must be after from', path: ['to'] });

export const businessHoursSchema = z
  .object({
    timeZone: z.string().min(1).max(64).refine(isTimeZone, 'an IANA time zone such as Europe/Berlin').describe('the local time of the weekly hours and holidays'),
    weekly: z
      .partialRecord(z.enum(WEEKDAYS), z.array(opening).max(8))
      .default({})
      .describe('openings per weekday (mon … sun), local time; a day left out is closed'),
    holidays: z.array(z.iso.date()).max(366).default([]).describe('local dates closed all day'),
    awayReply: z.string().trim().min(1).max(1024).nullable().default(null).describe('sent once per conversation to a customer who writes outside the hours'),
  })
  .strict()
  .meta({ examples: [{ timeZone: 'Europe/Berlin', weekly: { mon: [{ from: '09:00', to: '17:00' }] }, holidays: ['2026-12-25'], awayReply: 'We are closed; we answer from 9:00.' }] });

const responseSeconds = z
  .number()
  .int()
  .min(10)
  .max(30 * 24 * 3600)
  .nullable();

export const routingPatch = z
  .object({
    firstResponder: z.enum(FIRST_RESPONDERS).optional().describe('`bot`: the bot answers first (a human on handover); `agents`: every new conversation goes straight to the queue'),
    botFallbackSeconds: z
      .number()
      .int()
      .min(5)
      .max(7 * 24 * 3600)
      .nullable()
      .optional()
      .describe('with `bot`: a customer message the bot has not answered in this many seconds queues the conversation; null: never'),
    autoAssign: z
      .object({
        enabled: z.boolean().optional(),
        capacity: z.number().int().min(1).max(1000).nullable().optional().describe('open conversations an agent holds at most; null: no limit'),
      })
      .strict()
      .optional(),
    businessHours: businessHoursSchema.nullable().optional().describe('null: always open'),
    sla: z
      .object({
        firstResponseSeconds: responseSeconds.optional().describe("an agent's first answer in a conversation is due this many seconds after the customer's message; null: no target"),
        nextResponseSeconds: responseSeconds.optional().describe("each later answer is due this many seconds after the customer's next message; null: no target"),
        byPriority: z
          .partialRecord(
            z.enum(TICKET_PRIORITIES),
            z
              .object({
                firstResponseSeconds: responseSeconds.default(null).describe("this priority's first response target; null: the channel's"),
                nextResponseSeconds: responseSeconds.default(null).describe("this priority's next response target; null: the channel's"),
              })
              .strict()
              .nullable(),
          )
          .optional()
          .describe("targets of conversations of a priority (their contact's open ticket's), each replacing the channel's for that priority; a priority named replaces its entry whole, null removes it")
          .meta({ examples: [{ urgent: { firstResponseSeconds: 60, nextResponseSeconds: 300 } }] }),
        clock: z
          .enum(SLA_CLOCKS)
          .optional()
          .describe('`calendar` (the default): every second counts; `business_hours`: only the seconds the channel\'s business hours are open count (a channel without hours counts every second)'),
      })
      .strict()
      .optional()
      .describe('response-time targets; a conversation past one is flagged and conversation.sla_breached is emitted once'),
  })
  .strict()
  .meta({ examples: [{ firstResponder: 'bot', botFallbackSeconds: 120 }] });
export type RoutingPatch = z.infer<typeof routingPatch>;

export const routingView = z.object({
  firstResponder: z.enum(FIRST_RESPONDERS),
  botFallbackSeconds: z.number().int().nullable(),
  autoAssign: z.object({ enabled: z.boolean(), capacity: z.number().int().nullable() }),
  businessHours: z
    .object({
      timeZone: z.string(),
      weekly: z.partialRecord(z.enum(WEEKDAYS), z.array(z.object({ from: z.string(), to: z.string() }))),
      holidays: z.array(z.string()),
      awayReply: z.string().nullable(),
    })
    .nullable(),
  sla: z.object({
    firstResponseSeconds: z.number().int().nullable(),
    nextResponseSeconds: z.number().int().nullable(),
    byPriority: z
      .partialRecord(z.enum(TICKET_PRIORITIES), z.object({ firstResponseSeconds: z.number().int().nullable(), nextResponseSeconds: z.number().int().nullable() }))
      .describe("targets by the conversation's priority (its contact's open ticket's); null seconds: the channel's"),
    clock: z.enum(SLA_CLOCKS).describe('`calendar`: every second counts; `business_hours`: only open time under the channel\'s business hours'),
  }),
}).meta({
  examples: [
    {
      firstResponder: 'bot',
      botFallbackSeconds: 120,
      autoAssign: { enabled: true, capacity: 5 },
      businessHours: { timeZone: 'Europe/Berlin', weekly: { mon: [{ from: '09:00', to: '17:00' }] }, holidays: ['2026-12-25'], awayReply: 'We are closed; we answer from 9:00.' },
      sla: { firstResponseSeconds: 300, nextResponseSeconds: 900, byPriority: { urgent: { firstResponseSeconds: 60, nextResponseSeconds: 300 } }, clock: 'business_hours' },
    },
  ],
});

/** The settings after `patch`. */
export function mergeRouting(current: ChannelRouting, patch: RoutingPatch): ChannelRouting {
  const next: ChannelRouting = { ...current, autoAssign: { ...current.autoAssign }, sla: { ...current.sla, byPriority: { ...current.sla.byPriority } } };
  if (patch.firstResponder !== undefined) next.firstResponder = patch.firstResponder;
  if (patch.botFallbackSeconds !== undefined) next.botFallbackSeconds = patch.botFallbackSeconds;
  if (patch.autoAssign?.enabled !== undefined) next.autoAssign.enabled = patch.autoAssign.enabled;
  if (patch.autoAssign?.capacity !== undefined) next.autoAssign.capacity = patch.autoAssign.capacity;
  if (patch.sla?.firstResponseSeconds !== undefined) next.sla.firstResponseSeconds = patch.sla.firstResponseSeconds;
  if (patch.sla?.nextResponseSeconds !== undefined) next.sla.nextResponseSeconds = patch.sla.nextResponseSeconds;
  if (patch.sla?.clock !== undefined) next.sla.clock = patch.sla.clock;
  for (const [priority, targets] of Object.entries(patch.sla?.byPriority ?? {}) as [TicketPriority, ResponseSeconds | null | undefined][]) {
    // An entry with neither seconds set is the channel's targets: kept as no entry.
    if (targets === undefined) continue;
    if (targets === null || (targets.firstResponseSeconds === null && targets.nextResponseSeconds === null)) delete next.sla.byPriority[priority];
    else next.sla.byPriority[priority] = { firstResponseSeconds: targets.firstResponseSeconds, nextResponseSeconds: targets.nextResponseSeconds };
  }
  if (patch.businessHours !== undefined) {
    const b = patch.businessHours;
    next.businessHours =
      b === null
        ? null
        : ({ timeZone: b.timeZone, weekly: b.weekly as Partial<Record<Weekday, { from: string; to: string }[]>>, holidays: b.holidays, awayReply: b.awayReply } satisfies BusinessHours);
  }
  return next;
}
