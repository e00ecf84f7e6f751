// The owner's QR pages (docs/console.md#qrs-payments-and-refunds): the merchant's QRs, newest first, filtered by status and external
// reference; and one QR's facts, its payments and — while it is ACTIVE — its cancel form. Statuses are worded as
// today's QRs words them (terminal-today-view.ts): an expired QR reads "Expired", a cancelled one "Cancelled".
import { escapeHtml } from '../../kernel/html.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import type { Page, PageRequest } from '../../kernel/pagination.ts';
import type { PaymentRow, QrStatus, QrWithLastPayment } from '../../qr/service.ts';
import { effectiveState } from '../../qr/state.ts';
import type { ConsoleSession } from '../../users/service.ts';
import { consolePage, csrfField, formAlert } from './layout.ts';
import { facts, filterForm, moneyText, pager } from './lists.ts';
import { paymentRow } from './payments-view.ts';

/** The status filter of the QR list, as the API's `?status=` means it ('' is every QR). */
export interface QrListFilter {
  status: QrStatus | '';
  externalReference: string;
}

export interface QrsPage {
  locale: Locale;
  nonce: string;
  session: ConsoleSession;
  csrf: string;
  filter: QrListFilter;
  request: PageRequest;
  page: Page<QrWithLastPayment>;
  now: Date;
}

/** A QR's status in the words of today's QRs: waiting, paid, cancelled or expired. */
export function qrStatusText(locale: Locale, found: QrWithLastPayment, now: Date): { state: string; text: string } {
  const state = effectiveState(found.qr, now);
  if (state.status === 'CANCELED') {
    return state.cancelReason === 'expired'
      ? { state: 'EXPIRED', text: locale.t('console.today.status.expired') }
      : { state: 'CANCELED', text: locale.t('console.today.status.canceled') };
  }
  return { state: state.status, text: locale.t(state.status === 'PAID' ? 'console.today.status.paid' : 'console.today.status.active') };
}

/** A QR's amount as a list shows it: the fixed (or suggested) amount, or "Open amount". */
export function qrAmountText(locale: Locale, found: QrWithLastPayment): string {
  return found.qr.amount_centavos === null ? locale.t('console.today.open_amount') : moneyText(locale, found.qr.amount_centavos);
}

function qrRow(locale: Locale, found: QrWithLastPayment, now: Date): string {
  const { qr } = found;
  const status = qrStatusText(locale, found, now);
  return `<li class="row" data-qr="${escapeHtml(qr.id)}">
    <div class="what"><p><a href="${escapeHtml(locale.href(`/console/qrs/${qr.id}`))}"><strong>${escapeHtml(qrAmountText(locale, found))}</strong></a>${qr.description ? ` · ${escapeHtml(qr.description)}` : ''}</p>
    <p class="hint">${escapeHtml(locale.dateTime(qr.created_at))}${qr.external_reference ? ` · ${escapeHtml(qr.external_reference)}` : ''}</p></div>
    <p class="status" data-state="${status.state}" data-field="status">${escapeHtml(status.text)}</p>
  </li>`;
}

export function renderQrsPage({ locale, nonce, session, csrf, filter, request, page, now }: QrsPage): string {
  const list = page.items.length === 0
    ? `<p class="muted" id="qrs-empty">${locale.html('console.qrs.empty')}</p>`
    : `<ul class="rows" id="qrs">
  ${page.items.map((found) => qrRow(locale, found, now)).join('\n  ')}
  </ul>`;
  const params = { status: filter.status, external_reference: filter.externalReference };
  const body = `<section class="card" aria-labelledby="qrs-heading">
  <h1 id="qrs-heading">${locale.html('console.qrs.title')}</h1>
  ${filterForm(locale, '/console/qrs', [
    {
      name: 'status', label: locale.t('console.qrs.filter.status'), value: filter.status, options: [
        { value: '', label: locale.t('console.qrs.filter.all') },
        { value: 'ACTIVE', label: locale.t('console.qrs.filter.active') },
        { value: 'PAID', label: locale.t('console.qrs.filter.paid') },
        { value: 'CANCELED', label: locale.t('console.qrs.filter.canceled') },
      ],
    },
    { name: 'external_reference', label: locale.t('console.qrs.filter.reference'), value: filter.externalReference, maxLength: 64, hint: locale.t('console.qrs.filter.reference_hint') },
  ])}
  ${list}
  ${pager(locale, '/console/qrs', params, request, page)}
</section>`;
  return consolePage({ locale, nonce, title: locale.t('console.qrs.title'), body, session: { session, csrf, current: '/console/qrs' } });
}

export interface QrPage {
  locale: Locale;
  nonce: string;
  session: ConsoleSession;
  csrf: string;
  found: QrWithLastPayment;
  payLink: string;
  payments: Page<PaymentRow>;
  request: PageRequest;
  now: Date;
  /** The alert of a refused cancel (paid or closed before it arrived). */
  alert?: string;
}

function amountFact(locale: Locale, { qr }: QrWithLastPayment): string {
  if (qr.amount_centavos === null) return locale.t('console.today.open_amount');
  return qr.modify_amount ? locale.t('console.qr.amount_editable', { amount: moneyText(locale, qr.amount_centavos) }) : moneyText(locale, qr.amount_centavos);
}

function useFact(locale: Locale, { qr }: QrWithLastPayment): string {
  if (!qr.is_multi_use) return locale.t('console.qr.single');
  return qr.max_payments === null ? locale.t('console.qr.multi') : locale.t('console.qr.multi_max', { count: qr.max_payments });
}

export function renderQrPage({ locale, nonce, session, csrf, found, payLink, payments, request, now, alert }: QrPage): string {
  const { qr } = found;
  const status = qrStatusText(locale, found, now);
  const amount = qrAmountText(locale, found);
  const cancel = effectiveState(qr, now).status === 'ACTIVE'
    ? `<form method="post" action="${escapeHtml(locale.href(`/console/qrs/${qr.id}/cancel`))}" id="cancel-form">
  ${csrfField(csrf)}
  <p class="hint" id="cancel-hint">${locale.html('console.qr.cancel_hint')}</p>
  <button type="submit" class="danger" id="cancel-button" aria-describedby="cancel-hint" aria-label="${escapeHtml(locale.t('console.qr.cancel_label', { amount }))}">${locale.html('console.qr.cancel')}</button>
  </form>`
    : '';
  const list = payments.items.length === 0
    ? `<p class="muted" id="qr-payments-empty">${locale.html('console.qr.no_payments')}</p>`
    : `<ul class="rows" id="qr-payments">
  ${payments.items.map((payment) => paymentRow(locale, payment, { qrLink: false })).join('\n  ')}
  </ul>`;
  const body = `<section class="card" aria-labelledby="qr-heading">
  <h1 id="qr-heading">${locale.html('console.qr.title', { amount })}</h1>
  ${formAlert(alert)}
  ${facts([
    [locale.t('console.qr.status'), { html: `<span data-field="status" data-state="${status.state}">${escapeHtml(status.text)}</span>` }],
    [locale.t('console.qr.amount'), amountFact(locale, found)],
    [locale.t('console.qr.min'), qr.min_amount_centavos === null ? null : moneyText(locale, qr.min_amount_centavos)],
    [locale.t('console.qr.max'), qr.max_amount_centavos === null ? null : moneyText(locale, qr.max_amount_centavos)],
    [locale.t('console.qr.description'), qr.description],
    [locale.t('console.qr.use'), useFact(locale, found)],
    [locale.t('console.qr.collected'), locale.plural('console.qr.collected_value', qr.payments_count, { amount: moneyText(locale, qr.amount_collected_centavos) })],
    [locale.t('console.qr.expires'), qr.expires_at === null ? locale.t('console.qr.never') : locale.dateTime(qr.expires_at)],
    [locale.t('console.qr.reference'), qr.external_reference],
    [locale.t('console.qr.rail_reference'), qr.rail_reference],
    [locale.t('console.qr.pay_link'), { html: `<a href="${escapeHtml(payLink)}" data-field="pay-link">${escapeHtml(payLink)}</a>` }],
    [locale.t('console.qr.created'), locale.dateTime(qr.created_at)],
  ], 'qr-facts')}
  ${cancel}
</section>
<section class="card" aria-labelledby="qr-payments-heading">
  <h2 id="qr-payments-heading">${locale.html('console.qr.payments')}</h2>
  ${list}
  ${pager(locale, `/console/qrs/${qr.id}`, {}, request, payments)}
  <a class="button-link secondary" href="${escapeHtml(locale.href('/console/qrs'))}">${locale.html('console.qr.back')}</a>
</section>`;
  return consolePage({ locale, nonce, title: locale.t('console.qr.title', { amount }), body, session: { session, csrf, current: '/console/qrs' } });
}
