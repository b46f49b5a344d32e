import { useState } from 'preact/hooks';
import type { CreatedChannel, NewChannel } from '../api/types';
import { useAction } from './useLoad';

type Kind = 'sandbox' | 'graph' | 'web_chat';

const KINDS: { id: Kind; label: string; hint: string }[] = [
  { id: 'sandbox', label: 'WhatsApp on the sandbox network', hint: 'A test number, provisioned now, with the sandbox templates. No real messages leave this service.' },
  { id: 'graph', label: 'WhatsApp Business number', hint: "A number of your WhatsApp Business account on Meta's Cloud API: its ids and secrets from the Meta app dashboard." },
  { id: 'web_chat', label: 'Web chat', hint: 'A chat on your own site: visitors write from the pages of the origins you allow.' },
];

/** The request for the chosen kind, from the form's fields. */
function bodyOf(kind: Kind, f: Record<string, string>): NewChannel {
  const name = f.name!.trim();
  const phone = f.displayPhoneNumber?.replace(/\D/g, '');
  const display = phone ? { displayPhoneNumber: phone } : {};
  if (kind === 'web_chat') {
    const allowedOrigins = (f.allowedOrigins ?? '').split(/[\s,]+/).filter(Boolean);
    return { kind: 'web_chat', name, allowedOrigins };
  }
  if (kind === 'sandbox') return { kind: 'whatsapp_cloud', name, network: 'sandbox', ...display };
  return {
    kind: 'whatsapp_cloud',
    name,
    network: 'graph',
    phoneNumberId: f.phoneNumberId!.trim(),
    businessAccountId: f.businessAccountId!.trim(),
    accessToken: f.accessToken!.trim(),
    appSecret: f.appSecret!.trim(),
    ...display,
  };
}

/** Creates a channel of one of the three kinds; the fields follow the kind. */
export function NewChannelForm({ create, onCreated, onCancel }: { create: (body: NewChannel) => Promise<CreatedChannel>; onCreated: (c: CreatedChannel) => void; onCancel: () => void }) {
  const [kind, setKind] = useState<Kind>('sandbox');
  const action = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const fields = Object.fromEntries(new FormData(e.currentTarget as HTMLFormElement)) as Record<string, string>;
    let made: CreatedChannel | undefined;
    if (await action.run(async () => {
      made = await create(bodyOf(kind, fields));
    })) onCreated(made!);
  };
  const hint = KINDS.find((k) => k.id === kind)!.hint;
  return (
    <form class="card" onSubmit={(e) => void submit(e)} aria-label="New channel">
      <fieldset class="kinds">
        <legend>Kind</legend>
        {KINDS.map((k) => (
          <label key={k.id} class="check">
            <input type="radio" name="kind" value={k.id} checked={kind === k.id} onChange={() => setKind(k.id)} />
            {k.label}
          </label>
        ))}
      </fieldset>
      <p class="muted small">{hint}</p>
      <div class="row wrap">
        <label class="grow">
          Name
          <input name="name" required maxLength={120} placeholder={kind === 'web_chat' ? 'Website chat' : 'Support line'} />
        </label>
        {kind !== 'web_chat' && (
          <label>
            Display phone number {kind === 'sandbox' ? '(optional)' : ''}
            <input name="displayPhoneNumber" inputMode="numeric" pattern="[0-9+ ]{7,20}" placeholder="15550001234" />
          </label>
        )}
      </div>
      {kind === 'graph' && (
        <div class="row wrap">
          <label>
            Phone number ID
            <input name="phoneNumberId" required inputMode="numeric" pattern="[0-9]{5,20}" />
          </label>
          <label>
            WhatsApp Business account ID
            <input name="businessAccountId" required inputMode="numeric" pattern="[0-9]{5,20}" />
          </label>
          <label class="grow">
            Access token
            <input name="accessToken" type="password" required minLength={10} autocomplete="off" />
          </label>
          <label>
            App secret
            <input name="appSecret" type="password" required minLength={8} autocomplete="off" />
          </label>
        </div>
      )}
      {kind === 'web_chat' && (
        <label>
          Allowed origins (space or comma separated)
          <input name="allowedOrigins" placeholder="https://www.example.com" />
        </label>
      )}
      {action.error && <p class="error" role="alert">{action.error}</p>}
      <div class="row">
        <button type="submit" class="primary" disabled={action.busy}>Create channel</button>
        <button type="button" onClick={onCancel}>Cancel</button>
      </div>
    </form>
  );
}
