// The terminal's QR screen (docs/console.md#pos-terminal): the QR as large as the screen allows (the image the
// pay page shows — on a bank's rail, the bank's), the amount, the countdown to its expiry, "Guardar QR" (the pay
// page's own control, qr/pages/save-qr.ts: the PNG downloaded, or shared where the phone can) and "Cancelar";
// then, in place, a large "Pagado" with the receipt and "Nuevo cobro", or the QR expired or cancelled. The
// three states are all in the page, the script shows one (terminal-scripts.ts). Without JavaScript the
// page reloads itself every 5 s while the QR waits. No header: the screen is the customer's to scan.
import { countdownMarkup } from '../../kernel/countdown.ts';
import { escapeHtml } from '../../kernel/html.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import type { QrWithLastPayment } from '../../qr/service.ts';
import { qrFileName } from '../../qr/pages/qr-file-name.ts';
import { SAVE_QR_STYLES, saveQrLink } from '../../qr/pages/save-qr.ts';
import type { TerminalStatus } from '../terminal.ts';
import { consolePage, csrfField } from './layout.ts';
import { TERMINAL_STYLES } from './terminal-styles.ts';
import { qrScreenScript } from './terminal-scripts.ts';

export interface QrScreen {
  locale: Locale;
  nonce: string;
  csrf: string;
  found: QrWithLastPayment;
  /** The business's name, which names the saved QR's file. */
  merchantName: string;
  status: TerminalStatus;
  now: Date;
}

export function renderQrScreen({ locale, nonce, csrf, found, merchantName, status, now }: QrScreen): string {
  const { qr } = found;
  const askedText = qr.amount_centavos === null ? '' : locale.money(qr.amount_centavos);
  const paidText = status.status === 'PAID' && status.amount !== null ? locale.money(Math.round(Number(status.amount) * 100)) : '';
  const closedKey = status.cancel_reason === 'expired' ? 'console.terminal.closed.expired' : 'console.terminal.closed.merchant';
  const newCharge = (id: string) => `<a class="button-link" id="${id}" href="${escapeHtml(locale.href('/console/terminal'))}">${locale.html('console.terminal.new_charge')}</a>`;
  const titles = {
    active: locale.t('console.terminal.qr.title', { amount: askedText }),
    paid: locale.t('console.terminal.paid.title', { amount: askedText }),
    closed: locale.t('console.terminal.closed.title'),
  };
  const title = status.status === 'ACTIVE' ? titles.active : status.status === 'PAID' ? titles.paid : titles.closed;
  // One h1 whatever the state (the page's name); each state's own heading is an h2.
  const body = `<h1 class="visually-hidden">${locale.html('console.terminal.title')}</h1>
<section class="card centered" id="waiting" aria-labelledby="qr-heading"${status.status === 'ACTIVE' ? '' : ' hidden'}>
  <h2 id="qr-heading">${locale.html('console.terminal.qr.heading')}</h2>
  <p class="big-amount" id="qr-amount">${escapeHtml(askedText)}</p>
  ${qr.description ? `<p class="muted" id="qr-description">${escapeHtml(qr.description)}</p>` : ''}
  <img class="terminal-qr" id="qr-image" src="${escapeHtml(qr.qr_image)}" width="400" height="400" alt="${escapeHtml(locale.t('console.terminal.qr.alt', { amount: askedText }))}">
  ${qr.expires_at ? `<p class="muted">${escapeHtml(locale.t('pay.expiry.pay_by', { deadline: locale.deadline(qr.expires_at, now) }))}</p>
  ${countdownMarkup(locale)}` : ''}
  ${saveQrLink(locale, { payToken: qr.pay_token, fileName: qrFileName(merchantName, qr), helpKey: 'console.terminal.save_help', className: 'button-link secondary' })}
  <p class="offline" id="offline" role="status" hidden>${locale.html('console.terminal.offline')}</p>
  <form method="post" class="cancel" action="${escapeHtml(locale.href(`/console/terminal/qrs/${qr.id}/cancel`))}">
  ${csrfField(csrf)}
  <button type="submit" class="danger" id="cancel-button">${locale.html('console.terminal.cancel')}</button>
  </form>
</section>
<section class="card centered" id="paid" aria-labelledby="paid-heading"${status.status === 'PAID' ? '' : ' hidden'}>
  <h2 id="paid-heading" class="paid-mark" tabindex="-1">${locale.html('console.terminal.paid')}</h2>
  <p class="big-amount" id="paid-amount">${escapeHtml(paidText)}</p>
  <a class="button-link secondary" id="receipt-link" href="${escapeHtml(status.receipt_path === null ? '#' : locale.href(status.receipt_path))}">${locale.html('console.terminal.receipt')}</a>
  ${newCharge('new-charge-paid')}
</section>
<section class="card centered" id="closed" aria-labelledby="closed-heading"${status.status === 'CANCELED' ? '' : ' hidden'}>
  <h2 id="closed-heading" class="closed-mark" tabindex="-1">${locale.html('console.terminal.closed.title')}</h2>
  <p id="closed-text">${locale.html(closedKey)}</p>
  ${newCharge('new-charge-closed')}
</section>`;
  return consolePage({
    locale, nonce, title, body, styles: TERMINAL_STYLES + SAVE_QR_STYLES,
    // No script, no live page: reload while the QR waits, so the payment still shows.
    head: status.status === 'ACTIVE' ? '<noscript><meta http-equiv="refresh" content="5"></noscript>' : '',
    script: qrScreenScript(locale, status, now, titles),
  });
}
