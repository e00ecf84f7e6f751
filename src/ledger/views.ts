// The ledger's API views: pure functions from rows to the JSON the API answers (docs/architecture.md#conventions).
import { CURRENCY, centavos, centavosToAmount, formatCentavos } from '../money.ts';
import { formatWallClock } from '../time.ts';
import type { RevenueReport } from './revenue.ts';
import type { EntryLine, Statement } from './statements.ts';
import type { LedgerReport, MovementRow, PaymentSnapshot, TransferSnapshot } from './service.ts';
import type { BalanceRow } from './store.ts';
import type { Centavos } from '../money.ts';

/** The balance (docs/api-reference.md#balance). */
export function toBalanceView(balance: BalanceRow) {
  return {
    business_code: balance.business_code,
    currency: CURRENCY as typeof CURRENCY,
    available: centavosToAmount(balance.available_centavos),
    pending_out: centavosToAmount(balance.pending_out_centavos),
  };
}

/**
 * The wire form of a movement (docs/api-reference.md#movements): the snapshot stored with it gives a payment's masked payer
 * `details` (a refund's: the refunded payment's, with `payment_id` and `refund_id`) or a transfer's masked `destination`.
 */
export function toMovementView(movement: MovementRow) {
  const snapshot = movement.snapshot as Partial<PaymentSnapshot & TransferSnapshot>;
  return {
    id: movement.id,
    type: movement.type,
    amount: centavosToAmount(movement.amount_centavos),
    ...(movement.type === 'payment' ? feeAndNet(movement) : {}),
    currency: CURRENCY as typeof CURRENCY,
    status: movement.status,
    reference: movement.reference,
    date: movement.created_at.toISOString(),
    ...movementParties(movement, snapshot),
  };
}

/** A payment's fee and what it leaves the merchant (docs/fees.md). */
function feeAndNet(movement: MovementRow) {
  return { fee: centavosToAmount(movement.fee_centavos), net: centavosToAmount(centavos(movement.amount_centavos - movement.fee_centavos)) };
}

/** Who is on the other side: a transfer's destination, a fee's payment or transfer, a payment's or refund's payer. */
function movementParties(movement: MovementRow, snapshot: Partial<PaymentSnapshot & TransferSnapshot>) {
  switch (movement.type) {
    case 'transfer':
      return { destination: snapshot.destination ?? null };
    case 'fee':
      return { details: movement.charged_on === 'transfer'
        ? { of: 'transfer' as const, transfer_id: movement.charged_on_id! }
        : { of: 'payment' as const, payment_id: movement.charged_on_id! } };
    case 'payment':
    case 'refund':
      return { details: snapshot.details ?? null, external_reference: (snapshot as { external_reference?: string }).external_reference ?? null };
  }
}

/** The wire form of a ledger check (operator API and CLI). */
export function toLedgerReportView(report: LedgerReport) {
  return {
    ok: report.violations.length === 0 && report.problems.length === 0,
    balances_checked: report.balancesChecked,
    entries_checked: report.entriesChecked,
    violations: report.violations.map((v) => ({
      business_code: v.business_code,
      available: centavosToAmount(v.available_centavos),
      expected_available: centavosToAmount(v.expected_available_centavos),
      pending_out: centavosToAmount(v.pending_out_centavos),
      expected_pending_out: centavosToAmount(v.expected_pending_out_centavos),
    })),
    problems: report.problems.map((p) => ({ check: p.check, business_code: p.business_code, detail: p.detail })),
  };
}

/** The wire form of a statement (docs/api-reference.md#statements). */
export function toStatementView(statement: Statement) {
  const totals = (t: { count: number; centavos: Centavos }) => ({ count: t.count, amount: centavosToAmount(t.centavos) });
  return {
    business_code: statement.businessCode,
    currency: CURRENCY as typeof CURRENCY,
    from: statement.range.from,
    to: statement.range.to,
    opening_balance: centavosToAmount(statement.openingCentavos),
    closing_balance: centavosToAmount(statement.closingCentavos),
    days: statement.days.map((day) => ({
      date: day.date,
      opening_balance: centavosToAmount(day.openingCentavos),
      payments: totals(day.totals.payments),
      refunds: totals(day.totals.refunds),
      transfers: totals(day.totals.transfers),
      returns: totals(day.totals.returns),
      fees: totals(day.totals.fees),
      closing_balance: centavosToAmount(day.closingCentavos),
    })),
  };
}

/**
 * One CSV line of the journal export, in the order of CSV_COLUMNS: amounts as two-decimal text (an
 * accountant's spreadsheet reads `-20.00`), the counterparty as the movement shows it (masked). Text as
 * stored: the export's writer makes every cell inert for spreadsheets (csv.ts).
 */
export function toEntryCsvRow(line: EntryLine, zone: string, bankName: (bankCode: number) => string | undefined): unknown[] {
  const snapshot = line.snapshot as Partial<PaymentSnapshot & TransferSnapshot> & { qr_id?: string; external_reference?: string };
  // counterparty_bank is a bank's name on every row, as a payer's bank comes from the rail; a transfer's
  // destination stores its code, named from the configured banks (the code itself if the list lost it).
  const counterparty = snapshot.destination
    ? { bank: bankName(snapshot.destination.bank_code) ?? String(snapshot.destination.bank_code), account: snapshot.destination.account_number, name: snapshot.destination.account_titular }
    : { bank: snapshot.details?.source_bank ?? null, account: snapshot.details?.account_number ?? null, name: snapshot.details?.account_titular ?? null };
  return [
    line.entry_id, line.posted_at.toISOString(), line.kind, formatCentavos(line.amount_centavos), formatCentavos(line.balance_after_centavos),
    CURRENCY, line.reference, snapshot.external_reference ?? null, counterparty.bank, counterparty.account,
    counterparty.name, snapshot.qr_id ?? null, line.payment_id, line.transfer_id, line.refund_id,
    // The day of the statement the entry belongs to: an accountant imports by business day, and an entry
    // posted after 20:00 in La Paz is already the next day in UTC.
    formatWallClock(line.posted_at, zone).slice(0, 10),
  ];
}


/** The wire form of the revenue report (docs/fees.md#revenue); `names` are the merchants' names. */
export function toRevenueView(report: RevenueReport, names: ReadonlyMap<number, string>) {
  const totals = (t: { count: number; centavos: Centavos }) => ({ count: t.count, amount: centavosToAmount(t.centavos) });
  return {
    from: report.range.from,
    to: report.range.to,
    currency: CURRENCY as typeof CURRENCY,
    total: totals(report.total),
    activations: totals(report.activations),
    days: report.days.map((day) => ({ date: day.date, ...totals(day) })),
    merchants: report.merchants.map((m) => ({ business_code: m.businessCode, name: names.get(m.businessCode) ?? '', ...totals(m) })),
  };
}

/** The columns of `mps revenue --csv`: one row per day and merchant with fees, and per day with activations. */
export const REVENUE_CSV_COLUMNS = ['date', 'kind', 'business_code', 'merchant', 'count', 'amount'] as const;

export function toRevenueCsvRows(report: RevenueReport, names: ReadonlyMap<number, string>): unknown[][] {
  return report.lines.map((line) => [line.date, line.kind, line.businessCode, names.get(line.businessCode) ?? '', line.count, formatCentavos(line.centavos)]);
}
