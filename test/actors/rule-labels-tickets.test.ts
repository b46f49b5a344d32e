import { describe, expect, it } from 'vitest';
import { initialConversationState, type ConversationState } from '../../src/actors/index.js';
import { runAutomation, type MessageFacts, type RuleEffects } from '../../src/actors/conversation/automation.js';
import type { AutomationRule } from '../../src/domain/automation.js';

/*
 * Rules on labels and the label and ticket actions, in the conversation
 * actor: the order of what they do, a failing action recorded without
 * blocking the rest, and nothing twice when a message is delivered again.
 */

const now = new Date('2030-05-01T10:00:00Z');
const rule = (id: string, over: Partial<AutomationRule> = {}): AutomationRule => ({
  id,
  organizationId: 'org_1',
  name: id,
  enabled: true,
  conditions: [],
  actions: [{ type: 'webhook', event: id }],
  stop: false,
  createdAt: now.toISOString(),
  updatedAt: now.toISOString(),
  ...over,
});

const conversation = (): ConversationState => ({ ...initialConversationState('org_1/15550001111:pn1'), contactId: 'c1', session: { id: 's1', status: 'open', openedAt: now.toISOString(), inboundCount: 1 } });

function message(id: string, labels: string[]) {
  let asked = 0;
  const facts: MessageFacts = {
    networkMessageId: id,
    channelId: 'ch_1',
    awayReply: null,
    input: {
      content: { type: 'text', text: 'my parcel is broken' },
      channelId: 'ch_1',
      withinBusinessHours: true,
      attribute: async () => null,
      labels: async () => {
        asked++;
        return labels;
      },
    },
  };
  return { facts, asked: () => asked };
}

/** Labels the effects know: `vip` and `damaged`; attaching records what was attached. */
function labelEffects() {
  const on: string[] = [];
  const known = new Map([
    ['vip', { id: 'lbl_vip', name: 'VIP', color: '#ff0000' }],
    ['damaged', { id: 'lbl_dmg', name: 'Damaged', color: '#00ff00' }],
  ]);
  const effects: RuleEffects = {
    addLabel: async (ref) => {
      const label = known.get(ref.toLowerCase());
      if (label === undefined) return { ok: false, code: 'unknown_label', reason: `no label named "${ref}" in the organization` };
      const added = !on.includes(label.id);
      if (added) on.push(label.id);
      return { ok: true, label, labels: on.map((id) => [...known.values()].find((l) => l.id === id)!), added };
    },
  };
  return { effects, on };
}

const idsOf = (messageId: string) => (...parts: string[]) => [messageId, ...parts].join('.');

describe('rules on labels, and the label and ticket actions', () => {
  it('tests the labels of the conversation and the contact (by name, any case, or id), read once per message', async () => {
    const rules = [
      rule('vip', { conditions: [{ field: 'label', operator: 'equals', value: 'vip' }] }),
      rule('either', { conditions: [{ field: 'label', operator: 'in', value: ['gold', 'lbl_vip'] }] }),
      rule('none', { conditions: [{ field: 'label', operator: 'equals', value: 'spam' }] }),
    ];
    const m = message('m1', ['lbl_vip', 'VIP']);
    const r = await runAutomation(conversation(), [], rules, m.facts, now, idsOf('m1'));
    expect(r.fired).toEqual(['vip', 'either']);
    expect(m.asked()).toBe(1);
    const unlabelled = message('m2', []);
    expect((await runAutomation(conversation(), [], rules, unlabelled.facts, now, idsOf('m2'))).fired).toEqual([]);
    // No rule on labels: they are never read.
    const plain = message('m3', ['VIP']);
    await runAutomation(conversation(), [], [rule('every')], plain.facts, now, idsOf('m3'));
    expect(plain.asked()).toBe(0);
  });

  it('carries out actions in order, each with its timeline entry; a failing one is recorded and the rest still happen', async () => {
    const { effects, on } = labelEffects();
    const rules = [
      rule('triage', {
        actions: [
          { type: 'add_label', label: 'Damaged' },
          { type: 'add_label', label: 'no-such-label' },
          { type: 'create_ticket', subject: 'Damaged parcel' },
          { type: 'set_priority', priority: 'high' },
          { type: 'request_handover' },
        ],
      }),
      rule('vip', { actions: [{ type: 'add_label', label: 'vip' }, { type: 'add_label', label: 'damaged' }] }),
    ];
    const r = await runAutomation(conversation(), [], rules, message('m1', []).facts, now, idsOf('m1'), effects);
    expect(r.fired).toEqual(['triage', 'vip']);
    expect(on).toEqual(['lbl_dmg', 'lbl_vip']);
    expect(r.events.map((e) => e.type)).toEqual(['automation.fired', 'conversation.labels_changed', 'automation.failed', 'handover.requested', 'automation.fired', 'conversation.labels_changed']);
    expect(r.events[0]!.data).toMatchObject({ ruleId: 'triage', actions: [{ type: 'add_label' }, { type: 'add_label' }, { type: 'create_ticket', subject: 'Damaged parcel' }, { type: 'set_priority', priority: 'high' }, { type: 'request_handover' }] });
    expect(r.events[1]!.data).toMatchObject({ labels: [{ id: 'lbl_dmg', name: 'Damaged' }], by: 'automation', ruleId: 'triage' });
    expect(r.events[2]!.data).toMatchObject({ ruleId: 'triage', action: { type: 'add_label', label: 'no-such-label' }, code: 'unknown_label' });
    expect(r.state.handover.status).toBe('queued');
    expect(r.state.timeline!.map((d) => [d.system!.event, d.system!.ruleId])).toEqual([
      ['rule_fired', 'triage'],
      ['label_added', 'triage'],
      ['automation_failed', 'triage'],
      ['handover_requested', 'triage'],
      ['rule_fired', 'vip'],
      ['label_added', 'vip'],
    ]);
    expect(r.state.timeline![1]!.text).toBe('Label "Damaged" added by an automation (rule "triage")');
    expect(r.state.timeline![2]!.text).toContain('could not carry out add_label: no label named "no-such-label"');
  });

  it('fires nothing twice when the same message is delivered again', async () => {
    const { effects, on } = labelEffects();
    const rules = [rule('tag', { actions: [{ type: 'add_label', label: 'vip' }, { type: 'create_ticket', subject: 'Call back' }] })];
    const first = await runAutomation(conversation(), [], rules, message('m1', []).facts, now, idsOf('m1'), effects);
    expect(first.events.map((e) => e.type)).toEqual(['automation.fired', 'conversation.labels_changed']);
    const again = await runAutomation(first.state, [], rules, message('m1', []).facts, now, idsOf('m1'), effects);
    expect(again.events).toEqual([]);
    expect(again.state).toBe(first.state);
    expect(on).toEqual(['lbl_vip']);
    // A re-run from before the write (the first run's commit was lost) records the same event ids, and says nothing new about a label already on.
    const rerun = await runAutomation(conversation(), [], rules, message('m1', []).facts, now, idsOf('m1'), effects);
    expect(rerun.events.map((e) => e.id)).toEqual([first.events[0]!.id]);
  });
});
