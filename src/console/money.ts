// Money in and out, for the owner's console pages (docs/console.md#movements-statement-and-transfers; contract
// §12, §13, §15): what the movements, statement, transfers and payout pages ask of the ledger, transfers and
// payouts capabilities, in the console's terms. It holds no SQL and no rule of its own about money: the
// history is the API's (ledger listMovements), a month's statement and its CSV are the API's statement and
// export of that month's days (statements.ts dayRange/statementOf/exportEntries, with the API's own row
// function), a transfer is made by the API's own create (transfers/service.ts createTransfer: its
// idempotency, its debit and fee, its event) and cancelled by the API's cancel, and the payout schedule is
// the one the operator API answers.
import type { Readable } from 'node:stream';
import type { AppContext } from '../context.ts';
import type { IdempotencyScope } from '../idempotency/service.ts';
import { ApiError } from '../kernel/errors.ts';
import * as ledger from '../ledger/service.ts';
import { dayRange, exportEntries, statementOf, type DayRange, type Statement } from '../ledger/statements.ts';
import { toEntryCsvRow } from '../ledger/views.ts';
import { getMerchant, pricePlanOf } from '../merchants/service.ts';
import { transferFee } from '../merchants/pricing.ts';
import type { Centavos } from '../money.ts';
import { nextPayoutDay } from '../payouts/calendar.ts';
import * as qrs from '../qr/service.ts';
import { getPayoutSchedule, type PayoutSchedule } from '../payouts/service.ts';
import { formatWallClock, shiftDay } from '../time.ts';
import { bankNameLookup, configuredBanks } from '../transfers/banks.ts';
import type { CreateTransferBody, TransferResource, TransferStatus } from '../transfers/schemas.ts';
import * as transfers from '../transfers/service.ts';
import type { Page, PageRequest } from '../kernel/pagination.ts';

export type MoneyContext = Pick<AppContext, 'db' | 'replica' | 'config' | 'clock' | 'transferCreations'>;

// ---------------------------------------------------------------------------------------------------
// Movements

export interface MovementsPage {
  page: Page<ledger.MovementRow>;
  /** A transfer movement's transfer (movement id → transfer id), for its link. */
  transferIds: Map<number, number>;
  /** A payment movement's payment (movement id → payment id), for its link. */
  paymentIds: Map<number, number>;
}

/** One page of the merchant's movements, newest first, as GET /api/v2/balance/movements lists them. */
export async function movementsOf(context: MoneyContext, businessCode: number, type: ledger.MovementType | null, request: PageRequest): Promise<MovementsPage> {
  const reads = context.replica.session();
  const page = await ledger.listMovements(reads, { businessCode, type, beforeId: null }, request);
  const idsOf = (type: ledger.MovementType) => page.items.filter((movement) => movement.type === type).map((movement) => movement.id);
  const [transferIds, paymentIds] = await Promise.all([
    transfers.transferIdsOfMovements(reads, businessCode, idsOf('transfer')),
    qrs.paymentIdsOfMovements(reads, businessCode, idsOf('payment')),
  ]);
  return { page, transferIds, paymentIds };
}

export async function balanceOf(context: MoneyContext, businessCode: number): Promise<ledger.BalanceRow> {
  return ledger.getBalance(context.db, businessCode);
}

// ---------------------------------------------------------------------------------------------------
// A month's statement

/** Why a month cannot be shown: not a month (2025-13, any other text), after the current one, before the business. */
export type MonthRefusal = 'invalid' | 'future' | 'before';

/** The months a statement may be asked for: from the business's first month to the current one (SERVICE_TIMEZONE), newest first. */
export interface StatementMonths {
  current: string;
  first: string;
  months: string[];
}

export async function statementMonths(context: MoneyContext, businessCode: number): Promise<StatementMonths> {
  const zone = context.config.serviceTimeZone;
  const merchant = await getMerchant(context.db, businessCode);
  const current = formatWallClock(context.clock.now(), zone).slice(0, 7);
  const created = formatWallClock(merchant.created_at, zone).slice(0, 7);
  const first = created < current ? created : current;
  const months: string[] = [];
  for (let month = current; month >= first; month = previousMonth(month)) months.push(month);
  return { current, first, months };
}

function previousMonth(month: string): string {
  const [year, number] = month.split('-').map(Number) as [number, number];
  return number === 1 ? `${String(year - 1).padStart(4, '0')}-12` : `${String(year).padStart(4, '0')}-${String(number - 1).padStart(2, '0')}`;
}

/**
 * The days of `month` (YYYY-MM) as the statement and the export take them: the first to the last of the
 * month, the current month up to today. A refusal for anything else.
 */
export function monthRange(month: string, months: StatementMonths, context: MoneyContext): { range: DayRange } | { refusal: MonthRefusal } {
  const match = /^(\d{4})-(\d{2})$/.exec(month);
  if (!match || Number(match[2]) < 1 || Number(match[2]) > 12) return { refusal: 'invalid' };
  if (month > months.current) return { refusal: 'future' };
  if (month < months.first) return { refusal: 'before' };
  const zone = context.config.serviceTimeZone;
  const now = context.clock.now();
  const today = formatWallClock(now, zone).slice(0, 10);
  const from = `${month}-01`;
  const last = shiftDay(`${nextMonthOf(month)}-01`, -1);
  return { range: dayRange(from, last < today ? last : today, zone, now) };
}

function nextMonthOf(month: string): string {
  const [year, number] = month.split('-').map(Number) as [number, number];
  return number === 12 ? `${String(year + 1).padStart(4, '0')}-01` : `${String(year).padStart(4, '0')}-${String(number + 1).padStart(2, '0')}`;
}

/** The statement of `range`: the numbers of GET /api/v2/balance/statement for the same days. */
export async function statementFor(context: MoneyContext, businessCode: number, range: DayRange): Promise<Statement> {
  return statementOf(context.replica.session(), businessCode, range);
}

/** The §12 export of `range`: the bytes of GET /api/v2/balance/entries.csv for the same days, streamed. */
export function entriesCsv(context: MoneyContext, businessCode: number, range: DayRange): Readable {
  const bankName = bankNameLookup(configuredBanks(context.config));
  return exportEntries(context.replica.session(), businessCode, range, (line, zone) => toEntryCsvRow(line, zone, bankName));
}

/** The export's file name: the business's name (letters and digits only) and the month. */
export function csvFileName(businessName: string, month: string): string {
  const slug = businessName.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60);
  return `${slug || 'negocio'}-${month}.csv`;
}

// ---------------------------------------------------------------------------------------------------
// Transfers

/** The idempotency route of the console's transfers: its keys never meet the API's (POST /api/v2/transfers). */
export const CONSOLE_TRANSFER_ROUTE = 'POST /console/transfers';
const KEY_IN_USE_RETRIES = 40;
const KEY_IN_USE_PAUSE_MS = 100;

/** Whether the business may make a transfer now: refused as the API refuses its key (suspended, then the ACH module). */
export async function transferStanding(context: MoneyContext, businessCode: number): Promise<'ok' | 'MERCHANT_SUSPENDED' | 'MODULE_NOT_ENABLED'> {
  const merchant = await getMerchant(context.db, businessCode);
  if (merchant.status === 'suspended') return 'MERCHANT_SUSPENDED';
  if (!merchant.ach_enabled) return 'MODULE_NOT_ENABLED';
  return 'ok';
}

/** The fee a transfer made now is charged (the merchant's price plan, §15): what the confirmation shows. */
export async function transferFeeNow(context: MoneyContext, businessCode: number): Promise<Centavos> {
  return transferFee(await pricePlanOf(context.db, businessCode));
}

export type TransferOutcome = { made: TransferResource } | { refused: 'INSUFFICIENT_FUNDS' | 'MERCHANT_SUSPENDED' | 'MODULE_NOT_ENABLED' | 'IDEMPOTENCY_KEY_REUSED' };

/**
 * Makes the transfer of a confirmed form, once per form key: the API's create with the merchant's scope
 * and the console's route, so a second submit (a double tap, a reload of the post) replays the first
 * answer — the transfer, or its INSUFFICIENT_FUNDS. While the first is being written the key is in use;
 * the second waits for it, then replays it.
 */
export async function makeTransfer(context: MoneyContext, businessCode: number, body: CreateTransferBody, key: string): Promise<TransferOutcome> {
  const standing = await transferStanding(context, businessCode);
  if (standing !== 'ok') return { refused: standing };
  const idempotencyScope: IdempotencyScope = { caller: `merchant:${businessCode}`, route: CONSOLE_TRANSFER_ROUTE, key };
  for (let attempt = 0; ; attempt++) {
    try {
      const result = await transfers.createTransfer(context.transferCreations, { businessCode, idempotencyScope }, body, context.clock.now());
      if (result.statusCode === 201) return { made: result.body as TransferResource };
      const code = (result.body as { code?: string }).code;
      if (code === 'INSUFFICIENT_FUNDS') return { refused: 'INSUFFICIENT_FUNDS' };
      throw new Error(`a console transfer answered ${result.statusCode} ${JSON.stringify(result.body)}`);
    } catch (error) {
      if (error instanceof ApiError && error.code === 'IDEMPOTENCY_KEY_REUSED') return { refused: 'IDEMPOTENCY_KEY_REUSED' };
      if (!(error instanceof ApiError) || error.code !== 'IDEMPOTENCY_KEY_IN_USE' || attempt >= KEY_IN_USE_RETRIES) throw error;
      await new Promise((resolve) => setTimeout(resolve, KEY_IN_USE_PAUSE_MS));
    }
  }
}

export function transfersOf(context: MoneyContext, businessCode: number, status: TransferStatus | null, request: PageRequest) {
  return transfers.listTransfers(context.replica, businessCode, status, request);
}

export function transferOf(context: MoneyContext, businessCode: number, id: number) {
  return transfers.getTransfer(context.db, businessCode, id);
}

/** Cancels a PENDING transfer (the API's cancel); false when it is no longer PENDING. 404 for another merchant's. */
export async function cancelConsoleTransfer(context: MoneyContext, businessCode: number, id: number): Promise<boolean> {
  try {
    await transfers.cancelTransfer(context.db, businessCode, id, context.clock.now());
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.code === 'TRANSFER_NOT_CANCELABLE') return false;
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------------
// The payout schedule

export interface PayoutScheduleView {
  schedule: PayoutSchedule;
  /** The day of the next scheduled run (SERVICE_TIMEZONE), null when manual. */
  nextRun: string | null;
  payoutTime: string;
}

/** The merchant's payout schedule as the operator API reads it, with the day of its next run. */
export async function payoutScheduleOf(context: MoneyContext, businessCode: number): Promise<PayoutScheduleView> {
  const schedule = await getPayoutSchedule(context.db, businessCode);
  const { payoutTime, serviceTimeZone } = context.config;
  const days = schedule.interval === 'daily' ? { interval: 'daily' as const, weekday: null }
    : schedule.interval === 'weekly' && schedule.weekday !== null ? { interval: 'weekly' as const, weekday: schedule.weekday } : null;
  const nextRun = days && schedule.effectiveFrom !== null
    ? nextPayoutDay(days, schedule.effectiveFrom, context.clock.now(), payoutTime, serviceTimeZone) : null;
  return { schedule, nextRun, payoutTime: `${String(payoutTime.hour).padStart(2, '0')}:${String(payoutTime.minute).padStart(2, '0')}` };
}
