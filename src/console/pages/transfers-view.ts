// The owner's transfers pages (docs/console.md#transfers): the list with the payout schedule, a transfer's
// facts and its cancel, the new transfer's form and its confirmation.
import type { BankConfig } from '../../config.ts';
import { escapeHtml } from '../../kernel/html.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import type { MessageKey } from '../../kernel/i18n/messages-en.ts';
import type { Page, PageRequest } from '../../kernel/pagination.ts';
import { maskAccountNumber } from '../../masking.ts';
import { centavos, type Centavos } from '../../money.ts';
import { TRANSFER_STATUSES } from '../../transfers/schemas.ts';
import type { TransferRow } from '../../transfers/store.ts';
import type { PayoutScheduleView } from '../money.ts';
import type { FormErrors } from './forms.ts';
import { consolePage, csrfField, formAlert, type Framed, inputField } from './layout.ts';
import { facts, filterForm, moneyText, pager, selectField } from './lists.ts';
import { statusText } from './movements-view.ts';
import type { TransferField, TransferFormValues } from './transfers-form.ts';

const bankNameOf = (banks: readonly BankConfig[], code: number) => banks.find((bank) => bank.bankCode === code)?.name ?? String(code);

function destinationText(locale: Locale, banks: readonly BankConfig[], bankCode: number, maskedNumber: string, titular: string): string {
  return locale.t('console.transfers.destination_text', { bank: bankNameOf(banks, bankCode), account: maskedNumber, holder: titular });
}

function transferRow(locale: Locale, banks: readonly BankConfig[], row: TransferRow): string {
  return `<li class="row" data-transfer="${row.id}">
    <div class="what"><p><strong>${escapeHtml(moneyText(locale, row.amount_centavos))}</strong> · <span data-field="status">${escapeHtml(statusText(locale, row.status))}</span></p>
    <p class="hint">${escapeHtml(destinationText(locale, banks, row.bank_code, row.account_number.masked, row.account_titular))}</p>
    <p class="hint">${locale.html('console.transfers.row_meta', { fee: moneyText(locale, row.fee_centavos), origin: locale.t(`console.transfers.origin.${row.origin}`), created: locale.dateTime(row.created_at) })}</p></div>
    <a href="${escapeHtml(locale.href(`/console/transfers/${row.id}`))}" aria-label="${escapeHtml(locale.t('console.movements.open_transfer', { id: row.id }))}">${locale.html('console.movements.open')}</a>
  </li>`;
}

const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;

/** A calendar day (YYYY-MM-DD) in words. */
function dayText(locale: Locale, day: string): string {
  const [year, month, date] = day.split('-').map(Number) as [number, number, number];
  return new Intl.DateTimeFormat(locale.tag, { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' }).format(new Date(Date.UTC(year, month - 1, date, 12)));
}

/** The payout schedule, read only: the operator sets it. */
export function payoutCard(locale: Locale, banks: readonly BankConfig[], view: PayoutScheduleView): string {
  const { schedule, nextRun, payoutTime } = view;
  const interval = schedule.interval === 'weekly' && schedule.weekday !== null
    ? locale.t('console.payouts.weekly_on', { day: locale.t(`console.payouts.weekday.${WEEKDAYS[schedule.weekday - 1]!}`) })
    : locale.t(`console.payouts.interval.${schedule.interval}`);
  const last = schedule.lastRun
    ? `${locale.t(`console.payouts.outcome.${schedule.lastRun.outcome}` as MessageKey)} · ${dayText(locale, schedule.lastRun.business_date)}`
    : null;
  return `<section class="card" aria-labelledby="payouts-heading" id="payouts">
  <h2 id="payouts-heading">${locale.html('console.payouts.title')}</h2>
  ${facts([
    [locale.t('console.payouts.interval'), interval],
    [locale.t('console.payouts.destination'), schedule.destination
      ? destinationText(locale, banks, schedule.destination.bankCode, schedule.destination.accountNumber.masked, schedule.destination.accountTitular)
      : locale.t('console.payouts.no_destination')],
    [locale.t('console.payouts.minimum'), moneyText(locale, schedule.minimumCentavos)],
    [locale.t('console.payouts.keep'), moneyText(locale, schedule.keepCentavos)],
    [locale.t('console.payouts.time'), payoutTime],
    [locale.t('console.payouts.next_run'), nextRun ? `${dayText(locale, nextRun)}, ${payoutTime}` : null],
    [locale.t('console.payouts.last_run'), last],
  ], 'payout-schedule')}
  <p class="hint">${locale.html(schedule.interval === 'manual' ? 'console.payouts.manual_text' : 'console.payouts.scheduled_text')}</p>
  <p class="hint">${locale.html('console.payouts.who')}</p>
</section>`;
}

export interface TransfersView extends Framed {
  banks: readonly BankConfig[];
  page: Page<TransferRow>;
  status: string;
  request: PageRequest;
  payouts: PayoutScheduleView;
  /** Why the business cannot make a transfer now (no ACH module, suspended); the "New transfer" button is left out. */
  refusal: 'MODULE_NOT_ENABLED' | 'MERCHANT_SUSPENDED' | null;
}

export function renderTransfersPage({ locale, nonce, session, csrf, banks, page, status, request, payouts, refusal }: TransfersView): string {
  const body = `<section class="card" aria-labelledby="transfers-heading">
  <h1 id="transfers-heading">${locale.html('console.transfers.title')}</h1>
  ${refusal === null
    ? `<a class="button-link" id="new-transfer" href="${escapeHtml(locale.href('/console/transfers/new'))}">${locale.html('console.transfers.new')}</a>`
    : `<p id="no-transfers">${locale.html(refusal === 'MODULE_NOT_ENABLED' ? 'console.transfers.no_module.text' : 'console.transfers.error.suspended')}</p>`}
  ${filterForm(locale, '/console/transfers', [{
    name: 'status', label: locale.t('console.transfers.filter.status'), value: status,
    options: [{ value: '', label: locale.t('console.movements.filter.all') }, ...TRANSFER_STATUSES.map((value) => ({ value, label: statusText(locale, value) }))],
  }])}
  ${page.items.length === 0 ? `<p id="transfers-empty">${locale.html('console.transfers.empty')}</p>` : ''}
  <ul class="rows" id="transfers">
  ${page.items.map((row) => transferRow(locale, banks, row)).join('\n  ')}
  </ul>
  ${pager(locale, '/console/transfers', { status }, request, page)}
</section>
${payoutCard(locale, banks, payouts)}`;
  return consolePage({ locale, nonce, title: locale.t('console.transfers.title'), body, session: { session, csrf, current: '/console/transfers' } });
}

export interface TransferView extends Framed {
  banks: readonly BankConfig[];
  transfer: TransferRow;
  alert?: string;
}

export function renderTransferPage({ locale, nonce, session, csrf, banks, transfer, alert }: TransferView): string {
  const cancel = transfer.status === 'PENDING'
    ? `<form method="post" action="${escapeHtml(locale.href(`/console/transfers/${transfer.id}/cancel`))}" id="cancel-form">
  ${csrfField(csrf)}
  <button type="submit" class="danger" id="cancel-button" aria-label="${escapeHtml(locale.t('console.transfers.cancel_label', { id: transfer.id, amount: moneyText(locale, transfer.amount_centavos) }))}">${locale.html('console.transfers.cancel')}</button>
  </form>
  <p class="hint">${locale.html('console.transfers.cancel_hint')}</p>`
    : `<p class="hint" id="not-cancelable">${locale.html('console.transfers.not_cancelable', { status: statusText(locale, transfer.status) })}</p>`;
  const title = locale.t('console.transfers.one_title', { id: transfer.id });
  const body = `<section class="card" aria-labelledby="transfer-heading">
  <h1 id="transfer-heading">${escapeHtml(title)}</h1>
  ${formAlert(alert)}
  ${facts([
    [locale.t('console.transfers.status'), statusText(locale, transfer.status)],
    [locale.t('console.transfers.amount'), moneyText(locale, transfer.amount_centavos)],
    [locale.t('console.transfers.fee'), moneyText(locale, transfer.fee_centavos)],
    [locale.t('console.transfers.total'), moneyText(locale, centavos(transfer.amount_centavos + transfer.fee_centavos))],
    [locale.t('console.transfers.destination'), destinationText(locale, banks, transfer.bank_code, transfer.account_number.masked, transfer.account_titular)],
    [locale.t('console.transfers.reference'), transfer.reference],
    [locale.t('console.transfers.origin'), locale.t(`console.transfers.origin.${transfer.origin}`)],
    [locale.t('console.transfers.created'), locale.dateTime(transfer.created_at)],
    [locale.t('console.transfers.updated'), locale.dateTime(transfer.updated_at)],
    [locale.t('console.transfers.failure'), transfer.failure_code ? `${transfer.failure_code}${transfer.failure_message ? ` — ${transfer.failure_message}` : ''}` : null],
  ], 'transfer-facts')}
  ${cancel}
  <a class="button-link secondary" href="${escapeHtml(locale.href('/console/transfers'))}">${locale.html('console.transfers.back')}</a>
</section>`;
  return consolePage({ locale, nonce, title, body, session: { session, csrf, current: '/console/transfers' } });
}

export interface TransferFormView extends Framed {
  banks: readonly BankConfig[];
  values: TransferFormValues;
  errors: FormErrors<TransferField>;
  alert?: string;
  feeCentavos: Centavos;
}

export function renderTransferForm({ locale, nonce, session, csrf, banks, values, errors, alert, feeCentavos }: TransferFormView): string {
  const first = (['amount', 'bank_code', 'account_number', 'account_titular', 'reference'] as const).find((name) => errors[name] !== undefined);
  const bankError = errors.bank_code;
  const body = `<section class="card" aria-labelledby="new-transfer-heading">
  <h1 id="new-transfer-heading">${locale.html('console.transfers.new')}</h1>
  <p class="hint">${locale.html('console.transfers.form_text', { fee: moneyText(locale, feeCentavos) })}</p>
  ${formAlert(alert ?? errors._form)}
  <form method="post" action="${escapeHtml(locale.href('/console/transfers/new'))}" novalidate id="transfer-form">
  ${csrfField(csrf)}
  <input type="hidden" name="idempotency_key" value="${escapeHtml(values.key)}">
  ${inputField({ name: 'amount', label: locale.t('console.transfers.amount_field'), attributes: 'type="text" inputmode="decimal" autocomplete="off" maxlength="20" required', value: values.amount, hint: locale.t('console.transfers.amount_hint'), error: errors.amount, autofocus: first === 'amount' })}
  <div class="field">${selectField({
    name: 'bank_code', label: locale.t('console.transfers.bank_field'), value: values.bank_code,
    options: [{ value: '', label: locale.t('console.transfers.bank_choose') }, ...banks.map((bank) => ({ value: String(bank.bankCode), label: bank.name }))],
  }).replace('<select ', `<select required${bankError ? ' aria-invalid="true" aria-describedby="f-bank_code-error"' : ''}${first === 'bank_code' ? ' autofocus' : ''} `)}
  ${bankError ? `<p class="error" id="f-bank_code-error">${escapeHtml(bankError)}</p>` : ''}</div>
  ${inputField({ name: 'account_number', label: locale.t('console.transfers.account_field'), attributes: 'type="text" inputmode="numeric" autocomplete="off" maxlength="34" required', value: values.account_number, hint: locale.t('console.transfers.account_hint'), error: errors.account_number, autofocus: first === 'account_number' })}
  ${inputField({ name: 'account_titular', label: locale.t('console.transfers.holder_field'), attributes: 'type="text" autocomplete="off" maxlength="100" required', value: values.account_titular, error: errors.account_titular, autofocus: first === 'account_titular' })}
  ${inputField({ name: 'reference', label: locale.t('console.transfers.reference_field'), attributes: 'type="text" autocomplete="off" maxlength="50"', value: values.reference, hint: locale.t('console.transfers.reference_hint'), error: errors.reference, autofocus: first === 'reference' })}
  <button type="submit" id="review-button">${locale.html('console.transfers.review')}</button>
  </form>
  <a class="button-link secondary" href="${escapeHtml(locale.href('/console/transfers'))}">${locale.html('console.transfers.back')}</a>
</section>`;
  return consolePage({ locale, nonce, title: locale.t('console.transfers.new'), body, session: { session, csrf, current: '/console/transfers' }, styles: FORM_STYLES });
}

export interface ConfirmView extends Framed {
  banks: readonly BankConfig[];
  values: TransferFormValues;
  amountCentavos: Centavos;
  feeCentavos: Centavos;
}

/** The confirmation: what will be debited and where it goes; Confirm posts the same form (and key) to make it. */
export function renderConfirmPage({ locale, nonce, session, csrf, banks, values, amountCentavos, feeCentavos }: ConfirmView): string {
  const hiddenFields = (['amount', 'bank_code', 'account_number', 'account_titular', 'reference'] as const)
    .map((name) => `<input type="hidden" name="${name}" value="${escapeHtml(values[name])}">`).join('\n  ');
  const body = `<section class="card" aria-labelledby="confirm-heading">
  <h1 id="confirm-heading">${locale.html('console.transfers.confirm_title')}</h1>
  ${facts([
    [locale.t('console.transfers.amount'), moneyText(locale, amountCentavos)],
    [locale.t('console.transfers.fee'), moneyText(locale, feeCentavos)],
    [locale.t('console.transfers.total'), moneyText(locale, centavos(amountCentavos + feeCentavos))],
    [locale.t('console.transfers.destination'), destinationText(locale, banks, Number(values.bank_code), maskAccountNumber(values.account_number), values.account_titular)],
    [locale.t('console.transfers.reference'), values.reference === '' ? null : values.reference],
  ], 'confirm-facts')}
  <p class="hint">${locale.html('console.transfers.confirm_text')}</p>
  <form method="post" action="${escapeHtml(locale.href('/console/transfers'))}" id="confirm-form">
  ${csrfField(csrf)}
  <input type="hidden" name="idempotency_key" value="${escapeHtml(values.key)}">
  ${hiddenFields}
  <button type="submit" id="confirm-button">${locale.html('console.transfers.confirm', { amount: moneyText(locale, centavos(amountCentavos + feeCentavos)) })}</button>
  </form>
  <form method="post" action="${escapeHtml(locale.href('/console/transfers/new'))}" id="edit-form">
  ${csrfField(csrf)}
  <input type="hidden" name="idempotency_key" value="${escapeHtml(values.key)}">
  <input type="hidden" name="edit" value="1">
  ${hiddenFields}
  <button type="submit" class="secondary" id="edit-button">${locale.html('console.transfers.edit')}</button>
  </form>
</section>`;
  return consolePage({ locale, nonce, title: locale.t('console.transfers.confirm_title'), body, session: { session, csrf, current: '/console/transfers' } });
}

/** The bank's select as wide as the other inputs, however long a bank's name (no sideways scroll at 360 px). */
const FORM_STYLES = `
#transfer-form select { display: block; width: 100%; max-width: 100%; margin-top: .25rem; }
#transfer-form .field { margin: .75rem 0; }
`;
