import { request } from '../api/client';
import type { CreditEntry } from '../api/types';
import { useLoad } from './useLoad';

const KIND: Record<CreditEntry['kind'], string> = { top_up: 'top-up', charge: 'template send', refund: 'refund (send failed)', release: 'released (not sent)' };

/** The organization's credit balance and its history, newest first. */
export function CreditsSettings() {
  const credits = useLoad(() => request<{ balance: number; history: CreditEntry[] }>('GET', '/v1/credits'));
  return (
    <section class="panel" aria-labelledby="cr-title">
      <h1 id="cr-title">Credits</h1>
      {credits.error && <p class="error" role="alert">{credits.error}</p>}
      {credits.data && (
        <>
          <p class="balance" data-testid="balance">
            Balance: <strong>{credits.data.balance}</strong> credits
          </p>
          {credits.data.history.length === 0 ? (
            <p class="empty">No movement yet.</p>
          ) : (
            <div class="table-wrap">
              <table>
                <thead>
                  <tr><th scope="col">When</th><th scope="col">What</th><th scope="col">Change</th><th scope="col">Balance after</th><th scope="col">Reference</th></tr>
                </thead>
                <tbody>
                  {credits.data.history.map((h, i) => (
                    <tr key={i}>
                      <td>{new Date(h.at).toLocaleString()}</td>
                      <td>{KIND[h.kind]}</td>
                      <td class={h.amount < 0 ? 'neg' : 'pos'}>{h.amount > 0 ? `+${h.amount}` : h.amount}</td>
                      <td>{h.balance}</td>
                      <td class="small mono">{h.reference ?? ''}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
    </section>
  );
}
