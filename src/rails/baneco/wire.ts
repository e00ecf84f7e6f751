// Banco Económico's API Market on the wire (specification v1.3.0, contract §14): the bank's own shapes,
// named exactly as the bank names them, and strict readers of every answer and callback the rail reads.
// Whatever the bank sends that does not fit — malformed JSON, a missing field, a wrong type, an unknown
// code, a foreign currency — becomes `{ ok: false, problem }` ("the bank answered something we cannot
// read"), never an exception. The bank's codes map onto rail-neutral terms through closed tables with no
// default: a code the tables do not know is unreadable, not guessed.
import type { RailItemReport } from '../pay-out.ts';
import { maskAccountNumber } from '../../masking.ts';
import type { Centavos } from '../../money.ts';
import { formatWallClock } from '../../time.ts';
import {
  Unreadable, amount, array, date, dateOfDateTime, freeText, has, identifier, instantOf, integer, object,
  isCalendarDate, oneOf, own, optionalArray, readAnswer, text, time, wholeNumberText, type Fields, type Reading,
} from './reading.ts';

// ---------------------------------------------------------------------------------------------------
// The bank's shapes (requests we send, answers and callbacks it sends), field for field.

export type WireCurrency = 'BOB' | 'USD';

/** Every answer carries these: responseCode 0 is success, anything else the bank's refusal with `message`. */
export interface WireEnvelope {
  responseCode: number;
  message: string;
}

export interface AuthenticateRequest {
  userName: string;
  /** enc(BANECO_PASSWORD). */
  password: string;
}
export interface AuthenticateAnswer extends WireEnvelope {
  token: string;
}

export interface GenerateQrRequest {
  transactionId: string;
  /** enc(BANECO_ACCOUNT). */
  accountCredit: string;
  currency: WireCurrency;
  amount: number;
  description?: string;
  /** yyyy-MM-dd. */
  dueDate: string;
  singleUse: boolean;
  modifyAmount: boolean;
  branchCode?: string;
}
export interface GenerateQrAnswer extends WireEnvelope {
  qrId: string;
  /** A PNG, base64. */
  qrImage: string;
}

export interface CancelQrRequest {
  qrId: string;
}
export type CancelQrAnswer = WireEnvelope;

/** 0 active (pending), 1 paid, 9 cancelled. */
export type StatusQrCode = 0 | 1 | 9;
export interface StatusQrAnswer extends WireEnvelope {
  /** The specification's table spells it statusQRCode, its example statusQrCode: both are read. */
  statusQRCode?: StatusQrCode;
  statusQrCode?: StatusQrCode;
  payment: PaymentQR[] | null;
}

export interface PaidQrAnswer extends WireEnvelope {
  paymentList: PaymentQR[];
}

export interface PaymentQR {
  qrId: string;
  /** The bank's transaction number of this payment. */
  transactionId: string;
  /** yyyy-MM-ddTHH:mm:ss (the time part is 00:00:00 in the examples). */
  paymentDate: string;
  /** HH:mm:ss. */
  paymentTime: string;
  currency: WireCurrency;
  amount: number;
  /** The payer bank's ASFI code, e.g. "1016". */
  senderBankCode: string;
  senderName: string;
  /** Not used by the bank: always "0". */
  senderDocumentId: string;
  /** Obfuscated by the bank: "******1913". */
  senderAccount: string;
  description: string;
  branchCode: string;
}

export interface AccountHistoryRequest {
  /** enc(BANECO_ACCOUNT). */
  accountCode: string;
  startDate: string;
  endDate: string;
}
export type AccountTypeCode = 'CC' | 'CA';
export type AccountStatusCode = 'ACTIVA' | 'INMOVILIZADA' | 'CLAUSURADA' | 'CERRADA';
export type TransactionTypeCode = 'D' | 'C';
export interface AccountHeader {
  /** Encrypted. */
  accountCode: string;
  accountTypeCode: AccountTypeCode;
  productName: string;
  status: AccountStatusCode;
  currency: WireCurrency;
  balance: number;
  balanceReserved: number;
  balanceRetained: number;
  balanceAvailable: number;
}
export interface AccountDetail {
  transactionId: number;
  date: string;
  time: string;
  documentNumber: number;
  transactionType: TransactionTypeCode;
  /** Negative for debits. */
  amount: number;
  description: string;
  clienteNote: string;
}
export interface AccountWithheld {
  transactionId: number;
  date: string;
  time: string;
  amount: number;
  description: string;
  instruction: string;
  demanding: string;
  judge: string;
  piet: string;
}
export interface AccountHistoryAnswer extends WireEnvelope {
  accountHeader: AccountHeader;
  accountDetailList: AccountDetail[];
  accountWithheldList: AccountWithheld[];
}

export interface AmlData {
  AMLSource: string;
  AMLDestination: string;
}
export type BatchType = 'PAYROLL' | 'PROVIDERS';
/** CCAD: current or savings account; CMOVILD: mobile wallet. */
export type BatchAccountTypeCode = 'CCAD' | 'CMOVILD';
export interface BatchPayment {
  batchDetailId: string;
  amount: number;
  /** enc(the beneficiary's account number, hyphens included). */
  accountCode: string;
  accountTypeCode: BatchAccountTypeCode;
  /** The financial institution's ASFI code, as text. */
  bankCode: string;
  beneficiaryName: string;
  beneficiaryDocId?: string;
  beneficiaryPhone?: string;
  beneficiaryEmail?: string;
  note: string;
  AMLData: AmlData;
}
export interface BatchUploadRequest {
  batchId: string;
  type: BatchType;
  description: string;
  detailedDebit: boolean;
  /** enc(BANECO_ACCOUNT). */
  accountCode: string;
  batchCurrency: WireCurrency;
  batchAmount: number;
  AMLData: AmlData;
  paymentCount: number;
  paymentList: BatchPayment[];
}
export interface BatchUploadAnswer extends WireEnvelope {
  bankBatchId: number;
}

/** The bank's callback to us when a QR is paid. */
export interface NotifyPaymentQrBody {
  payment: PaymentQR;
}
/** ACEP accepted, RECH rejected. */
export type NotifyStatusCode = 'ACEP' | 'RECH';
/** The bank's callback to us, per batch item. */
export interface NotifyStatusBody {
  bankBatchId: number;
  batchId: string;
  batchDetailId: string;
  status: NotifyStatusCode;
  descriptionStatus?: string;
  transactionIdDebit: number;
  transactionIdCredit: string;
}
/** What we answer to either callback. */
export type CallbackAnswer = WireEnvelope;
export const CALLBACK_ACCEPTED: CallbackAnswer = { responseCode: 0, message: '' };

// ---------------------------------------------------------------------------------------------------
// Rail-neutral terms, and the closed tables from the bank's codes onto them.

/** What a bank QR is, whichever bank issued it. */
export type BankQrState = 'active' | 'paid' | 'cancelled';

export const QR_STATE_OF_STATUS_CODE = {
  0: 'active',
  1: 'paid',
  9: 'cancelled',
} as const satisfies Record<StatusQrCode, BankQrState>;
const STATUS_QR_CODES = [0, 1, 9] as const satisfies readonly StatusQrCode[];

/** ACEP: the destination account was credited; RECH: refused (the reason in descriptionStatus). */
export const ITEM_OUTCOME_OF_NOTIFY_STATUS = {
  ACEP: 'accepted',
  RECH: 'rejected',
} as const satisfies Record<NotifyStatusCode, RailItemReport['outcome']>;

export type AccountEntryDirection = 'debit' | 'credit';
export const DIRECTION_OF_TRANSACTION_TYPE = {
  D: 'debit',
  C: 'credit',
} as const satisfies Record<TransactionTypeCode, AccountEntryDirection>;

// ---------------------------------------------------------------------------------------------------
// What the rail reads out of the bank's answers.

/** A payment the bank lists, readable and in BOB: money that moved, to be recorded once per transactionId. */
export interface BankPayment {
  kind: 'payment';
  qrId: string;
  transactionId: string;
  /** paymentDate's date with paymentTime, in SERVICE_TIMEZONE. */
  paidAt: Date;
  /** The business day the payment belongs to (paymentDate), yyyy-MM-dd. */
  paymentDate: string;
  amountCentavos: Centavos;
  senderBankCode: string;
  senderName: string;
  /** The payer's account as the bank masks it (masked here too should the bank ever send it whole). */
  senderAccount: string;
  description: string;
  branchCode: string;
}

/**
 * A listed payment the rail cannot record as one (another currency, a field out of shape): money may have
 * moved, so it is kept for reconciliation with whatever could be read of it, never dropped in silence.
 */
export interface UnreadablePayment {
  kind: 'unreadable';
  qrId: string | null;
  transactionId: string | null;
  currency: string | null;
  problem: string;
}

export type PaymentReading = BankPayment | UnreadablePayment;

export interface QrStatusReading {
  state: BankQrState;
  /** Entries without a transactionId are left out: only payments listed with one move money (§14.3). */
  payments: PaymentReading[];
}

export interface GeneratedQr {
  qrId: string;
  /** The bank's PNG as base64, unchanged. */
  qrImage: string;
}

export interface AccountEntry {
  /** The account history's transaction number, as decimal text. */
  transactionId: string;
  date: string;
  time: string;
  bookedAt: Date;
  documentNumber: string;
  direction: AccountEntryDirection;
  /** Negative for debits, as the bank writes them. */
  amountCentavos: Centavos;
  description: string;
  note: string;
}

export interface AccountHistory {
  accountTypeCode: AccountTypeCode;
  status: AccountStatusCode;
  currency: 'BOB';
  balanceCentavos: Centavos;
  balanceAvailableCentavos: Centavos;
  entries: AccountEntry[];
}

export interface UploadedBatch {
  bankBatchId: string;
}

/** One batch item's outcome, as the bank's notifyStatus reports it. */
export interface BatchItemStatus {
  bankBatchId: string;
  batchId: string;
  batchDetailId: string;
  bankStatus: NotifyStatusCode;
  outcome: (typeof ITEM_OUTCOME_OF_NOTIFY_STATUS)[NotifyStatusCode];
  /** descriptionStatus, as the bank wrote it (the caller cleans it before showing it). */
  reason: string | null;
  /** Required with ACEP (reconciliation finds the debit by it); a rejection may have none. */
  transactionIdDebit: string | null;
  transactionIdCredit: string | null;
}

/** The bank's notifyPaymentQR: a hint naming a QR, whose statusQR the service then reads (§14.3). */
export interface PaymentNotification {
  qrId: string;
  payment: PaymentReading;
}

// ---------------------------------------------------------------------------------------------------
// Readers.

const LIST_LIMIT = 100_000;
const QR_ID = 100;
const NAME = 500;
const NOTE = 1_000;
/** A QR PNG is a few kilobytes; two megabytes of base64 is far beyond any the bank will draw. */
const QR_IMAGE = 2 * 1024 * 1024;
const PNG_BASE64 = /^iVBORw0KGgo[A-Za-z0-9+/]*={0,2}$/;
const TOKEN = /^[\x21-\x7e]+$/;

/** The envelope of any answer: its responseCode and the bank's message ('' when absent). */
export function readEnvelope(body: unknown): Reading<WireEnvelope> {
  return readAnswer(() => {
    const fields = object(body, 'answer');
    return { responseCode: integer(fields, 'responseCode', 'answer'), message: freeText(fields, 'message', 'answer', 10_000) };
  });
}

export function readAuthenticateAnswer(body: unknown): Reading<{ token: string }> {
  return readAnswer(() => ({ token: text(object(body, 'answer'), 'token', 'answer', { maxLength: 8192, pattern: TOKEN, shape: 'a bearer token' }) }));
}

export function readGenerateQrAnswer(body: unknown): Reading<GeneratedQr> {
  return readAnswer(() => {
    const fields = object(body, 'answer');
    return {
      qrId: identifier(fields, 'qrId', 'answer', QR_ID),
      qrImage: text(fields, 'qrImage', 'answer', { maxLength: QR_IMAGE, pattern: PNG_BASE64, shape: 'a PNG in base64' }),
    };
  });
}

/** cancelQR answers only the envelope: success needs nothing more. */
export function readCancelQrAnswer(body: unknown): Reading<null> {
  return readAnswer(() => {
    object(body, 'answer');
    return null;
  });
}

export function readStatusQrAnswer(body: unknown, zone: string): Reading<QrStatusReading> {
  return readAnswer(() => {
    const fields = object(body, 'answer');
    const code = statusCode(fields);
    const state = QR_STATE_OF_STATUS_CODE[code];
    // A paid QR lists its payments; an active (multi-use) or cancelled one may list some or none.
    const list = state === 'paid' ? array(fields, 'payment', 'answer', LIST_LIMIT) : optionalArray(fields, 'payment', 'answer', LIST_LIMIT);
    if (state === 'paid' && list.length === 0) throw new Unreadable('answer.payment: a paid QR lists no payment');
    return { state, payments: readPaymentList(list, 'answer.payment', zone) };
  });
}

export function readPaidQrAnswer(body: unknown, zone: string): Reading<{ payments: PaymentReading[] }> {
  return readAnswer(() => {
    const fields = object(body, 'answer');
    return { payments: readPaymentList(array(fields, 'paymentList', 'answer', LIST_LIMIT), 'answer.paymentList', zone) };
  });
}

export function readAccountHistoryAnswer(body: unknown, zone: string): Reading<AccountHistory> {
  return readAnswer(() => {
    const fields = object(body, 'answer');
    const header = object(own(fields, 'accountHeader'), 'answer.accountHeader');
    const at = 'answer.accountHeader';
    const currency = oneOf(header, 'currency', at, ['BOB', 'USD'] as const);
    // The platform's account is in BOB; a history in another currency is some other account's.
    if (currency !== 'BOB') throw new Unreadable(`${at}.currency: the platform's account is in BOB`);
    const money = (key: string) => amount(header, key, at, { signed: true, minCentavos: Number.MIN_SAFE_INTEGER });
    money('balanceReserved');
    money('balanceRetained');
    // accountWithheldList (court holds) is not read: nothing in the rail depends on it.
    return {
      accountTypeCode: oneOf(header, 'accountTypeCode', at, ['CC', 'CA'] as const),
      status: oneOf(header, 'status', at, ['ACTIVA', 'INMOVILIZADA', 'CLAUSURADA', 'CERRADA'] as const),
      currency,
      balanceCentavos: money('balance'),
      balanceAvailableCentavos: money('balanceAvailable'),
      entries: array(fields, 'accountDetailList', 'answer', LIST_LIMIT).map((item, index) => readAccountEntry(item, `answer.accountDetailList[${index}]`, zone)),
    };
  });
}

export function readBatchUploadAnswer(body: unknown): Reading<UploadedBatch> {
  return readAnswer(() => ({ bankBatchId: wholeNumberText(object(body, 'answer'), 'bankBatchId', 'answer') }));
}

/** The body of the bank's notifyPaymentQR callback, `{ payment: PaymentQR }`: readable when at least its qrId is. */
export function readPaymentNotification(body: unknown, zone: string): Reading<PaymentNotification> {
  return readAnswer(() => {
    const payment = object(own(object(body, 'body'), 'payment'), 'body.payment');
    return { qrId: identifier(payment, 'qrId', 'body.payment', QR_ID), payment: readPayment(payment, 'body.payment', zone) };
  });
}

/** The body of the bank's notifyStatus callback. */
export function readStatusNotification(body: unknown): Reading<BatchItemStatus> {
  return readAnswer(() => {
    const fields = object(body, 'body');
    const bankStatus = oneOf(fields, 'status', 'body', ['ACEP', 'RECH'] as const);
    const accepted = bankStatus === 'ACEP';
    // An accepted item names its debit and credit. A rejected one moved nothing: what it carries there (the
    // specification leaves it open; 0 and "" are likely) is read as "none" when empty or zero.
    const empty = (key: string) => !has(fields, key) || own(fields, key) === '' || own(fields, key) === 0 || own(fields, key) === '0';
    const optionalNumber = (key: string) => (!accepted && empty(key) ? null : wholeNumberText(fields, key, 'body'));
    const optionalId = (key: string) => (!accepted && empty(key) ? null : identifier(fields, key, 'body'));
    return {
      bankBatchId: wholeNumberText(fields, 'bankBatchId', 'body'),
      batchId: identifier(fields, 'batchId', 'body'),
      batchDetailId: identifier(fields, 'batchDetailId', 'body'),
      bankStatus,
      outcome: ITEM_OUTCOME_OF_NOTIFY_STATUS[bankStatus],
      reason: has(fields, 'descriptionStatus') ? text(fields, 'descriptionStatus', 'body', { maxLength: NOTE }) : null,
      transactionIdDebit: optionalNumber('transactionIdDebit'),
      transactionIdCredit: optionalId('transactionIdCredit'),
    };
  });
}

function statusCode(fields: Fields): StatusQrCode {
  const spellings = (['statusQRCode', 'statusQrCode'] as const).filter((key) => has(fields, key));
  if (spellings.length === 0) throw new Unreadable('answer.statusQRCode: missing');
  const codes = spellings.map((key) => integer(fields, key, 'answer'));
  if (codes.length === 2 && codes[0] !== codes[1]) throw new Unreadable('answer: statusQRCode and statusQrCode disagree');
  const code = codes[0]!;
  if (!(STATUS_QR_CODES as readonly number[]).includes(code)) throw new Unreadable('answer.statusQRCode: expected 0, 1 or 9');
  return code as StatusQrCode;
}

function readPaymentList(list: unknown[], path: string, zone: string): PaymentReading[] {
  return list.flatMap((item, index) => {
    const at = `${path}[${index}]`;
    const fields = object(item, at);
    // §14.3: only payments listed with a transactionId move money; an entry without one records nothing.
    if (!has(fields, 'transactionId') || own(fields, 'transactionId') === '') return [];
    return [readPayment(fields, at, zone)];
  });
}

/** One PaymentQR: a BankPayment, or an UnreadablePayment keeping what could be read of it. */
function readPayment(fields: Fields, path: string, zone: string): PaymentReading {
  const reading = readAnswer((): BankPayment => {
    const currency = oneOf(fields, 'currency', path, ['BOB', 'USD'] as const);
    if (currency !== 'BOB') throw new Unreadable(`${path}.currency: ${currency} credits no merchant (BOB only)`);
    const paymentDate = dateOfDateTime(fields, 'paymentDate', path);
    const paymentTime = time(fields, 'paymentTime', path);
    const senderAccount = text(fields, 'senderAccount', path, { maxLength: 64 });
    return {
      kind: 'payment',
      qrId: identifier(fields, 'qrId', path, QR_ID),
      transactionId: identifier(fields, 'transactionId', path),
      paidAt: instantOf(paymentDate, paymentTime, zone, path),
      paymentDate,
      amountCentavos: amount(fields, 'amount', path, { signed: false, minCentavos: 1 }),
      senderBankCode: identifier(fields, 'senderBankCode', path, 20),
      senderName: freeText(fields, 'senderName', path, NAME),
      // The bank obfuscates it; should it ever send one whole, it is masked before anything keeps it.
      senderAccount: senderAccount.includes('*') ? senderAccount : maskAccountNumber(senderAccount),
      description: freeText(fields, 'description', path, NOTE),
      branchCode: freeText(fields, 'branchCode', path, 20),
    };
  });
  if (reading.ok) return reading.value;
  const readable = (key: string) => readAnswer(() => identifier(fields, key, path));
  const qrId = readable('qrId');
  const transactionId = readable('transactionId');
  const currency = readAnswer(() => identifier(fields, 'currency', path, 10));
  return {
    kind: 'unreadable',
    qrId: qrId.ok ? qrId.value : null,
    transactionId: transactionId.ok ? transactionId.value : null,
    currency: currency.ok ? currency.value : null,
    problem: reading.problem,
  };
}

function readAccountEntry(item: unknown, path: string, zone: string): AccountEntry {
  const fields = object(item, path);
  const direction = DIRECTION_OF_TRANSACTION_TYPE[oneOf(fields, 'transactionType', path, ['D', 'C'] as const)];
  const amountCentavos = amount(fields, 'amount', path, { signed: true, minCentavos: Number.MIN_SAFE_INTEGER });
  // The bank writes debits negative: a debit with a positive amount (or a negative credit) is a misreading somewhere.
  if ((direction === 'debit' && amountCentavos > 0) || (direction === 'credit' && amountCentavos < 0)) {
    throw new Unreadable(`${path}.amount: its sign contradicts transactionType`);
  }
  const day = date(fields, 'date', path);
  const clock = time(fields, 'time', path);
  return {
    transactionId: wholeNumberText(fields, 'transactionId', path),
    date: day,
    time: clock,
    bookedAt: instantOf(day, clock, zone, path),
    documentNumber: wholeNumberText(fields, 'documentNumber', path),
    direction,
    amountCentavos,
    description: freeText(fields, 'description', path, NOTE),
    note: freeText(fields, 'clienteNote', path, NOTE),
  };
}

// ---------------------------------------------------------------------------------------------------
// Dates we send.

/** The date of `instant` in `zone`, as the bank's `yyyy-MM-dd` (a QR's dueDate). */
export function wireDateOf(instant: Date, zone: string): string {
  return formatWallClock(instant, zone).slice(0, 10);
}

/** A `yyyy-MM-dd` business date as the bank's path date `yyyyMMdd`; throws for anything else (a programming error). */
export function wirePathDate(day: string): string {
  if (!isCalendarDate(day)) throw new Error('a business date must be a real date yyyy-MM-dd');
  return day.replaceAll('-', '');
}

