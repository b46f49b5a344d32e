import { useState } from 'preact/hooks';

/** Copies a value to the clipboard; says so for a moment. Without clipboard access (an http page), the value stays selectable beside it. */
export function CopyButton({ value, label = 'Copy' }: { value: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  const copy = () => {
    void navigator.clipboard
      ?.writeText(value)
      .then(() => {
        setCopied(true);
        setTimeout(() => setCopied(false), 1500);
      })
      .catch(() => undefined);
  };
  return (
    <button type="button" onClick={copy} aria-live="polite">
      {copied ? 'Copied' : label}
    </button>
  );
}

/** A value to copy (a URL, a token), shown in full and selectable, with its copy button. */
export function CopyField({ label, value, testId }: { label: string; value: string; testId?: string }) {
  return (
    <div class="copy-field">
      <span class="muted small">{label}</span>
      <div class="row">
        <code class="copyable grow" data-testid={testId}>{value}</code>
        <CopyButton value={value} label={`Copy ${label[0]!.toLowerCase()}${label.slice(1)}`} />
      </div>
    </div>
  );
}
