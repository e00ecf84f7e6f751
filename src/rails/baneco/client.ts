// The HTTP client of Banco Económico's API Market (contract §14.2): one token per client, obtained once
// for concurrent callers, repeated once after an HTTP 401; the password and every account travel
// encrypted; every call ends in exactly one outcome — ok, refused, or unknown — and reports each HTTP
// exchange it made (operation, outcome, HTTP status, latency) for the rail's attempt log. The client
// writes nothing anywhere and throws only for a caller's programming error; no secret (password, AES key,
// token, callback secret) and no full account number ever appears in what it returns.
import { performance } from 'node:perf_hooks';
import type { BanecoConfig } from '../../config.ts';
import { maskAccountNumber, revealAccountNumber, type FullAccountNumber } from '../../masking.ts';
import { centavosToAmount, type Centavos } from '../../money.ts';
import { BanecoCipher } from './aes.ts';
import { exchange, type ExchangeResult, type HttpMethod, type RefusalReason, type UnknownReason } from './exchange.ts';
import { cleanBankText, isCalendarDate, type Reading } from './reading.ts';
import {
  readAccountHistoryAnswer, readAuthenticateAnswer, readBatchUploadAnswer, readCancelQrAnswer, readGenerateQrAnswer, readPaidQrAnswer,
  readStatusQrAnswer, wirePathDate, type AccountHistory, type AuthenticateRequest, type BatchPayment, type BatchUploadRequest,
  type CancelQrRequest, type GenerateQrRequest, type GeneratedQr, type PaymentReading, type QrStatusReading, type UploadedBatch,
  type AccountHistoryRequest,
} from './wire.ts';

export type { RefusalReason, UnknownReason } from './exchange.ts';

export type BanecoOperation = 'authenticate' | 'generateQr' | 'cancelQr' | 'statusQr' | 'paidQr' | 'accountHistory' | 'uploadBatch';

/** What one HTTP exchange came to, for the rail's attempt log (`unauthorized`: a 401 that led to a new token). */
export interface BanecoCallRecord {
  operation: BanecoOperation;
  outcome: 'ok' | 'refused' | 'unknown' | 'unauthorized';
  /** null when no HTTP answer came (timeout, connection). */
  httpStatus: number | null;
  latencyMs: number;
}

/**
 * What a call came to. `refused`: the bank (responseCode ≠ 0) or its gateway (HTTP 4xx other than 401)
 * turned it away; nothing was done. `unknown`: the bank may have acted — never read it as a failure.
 * `calls` lists every HTTP exchange the call made, the authentication it waited for included.
 */
export type BanecoResult<T> =
  | { outcome: 'ok'; value: T; calls: BanecoCallRecord[] }
  | { outcome: 'refused'; reason: RefusalReason; responseCode: number | null; httpStatus: number | null; message: string; calls: BanecoCallRecord[] }
  | { outcome: 'unknown'; reason: UnknownReason; httpStatus: number | null; problem: string; calls: BanecoCallRecord[] };

/** A QR for the bank to issue (generateQR). Currency is BOB; accountCredit and branchCode come from the configuration. */
export interface QrOrder {
  /** The QR's id in this service. */
  transactionId: string;
  amountCentavos: Centavos;
  /** The QR's description, or ''. */
  description: string;
  /** yyyy-MM-dd in SERVICE_TIMEZONE (wireDateOf). */
  dueDate: string;
  singleUse: boolean;
  modifyAmount: boolean;
}

/** One transfer of a batch. */
export interface BatchItemOrder {
  /** railKey('transfer', id). */
  batchDetailId: string;
  amountCentavos: Centavos;
  /** The full number, hyphens included; opened here only to be encrypted. */
  accountNumber: FullAccountNumber;
  /** The destination's ASFI code (GET /api/v2/banks' bank_code). */
  bankCode: number;
  beneficiaryName: string;
  /** The transfer's reference, or ''. */
  note: string;
}

/** A batch to upload (§14.4). */
export interface BatchOrder {
  /** railKey('batch', id). */
  batchId: string;
  items: BatchItemOrder[];
}

export interface BanecoClientOptions {
  config: BanecoConfig;
  /** SERVICE_TIMEZONE: the bank's dates and times are read in it. */
  serviceTimeZone: string;
  /** Called with every HTTP exchange as it ends (metrics, logs); an exception it throws is ignored. */
  onCall?: (record: BanecoCallRecord) => void;
}

/** A batch holds at most this many transfers (§14.4). */
export const MAX_BATCH_ITEMS = 500;
const MESSAGE_LENGTH = 200;
/** Eight digits or more, hyphens allowed inside: what an account number looks like in a sentence. */
const LONG_DIGIT_RUN = /\d(?:-?\d){7,}/g;

type TokenReading = { ok: true; token: string } | { ok: false; result: BanecoResult<never> };

export class BanecoClient {
  readonly #config: BanecoConfig;
  readonly #zone: string;
  readonly #cipher: BanecoCipher;
  readonly #onCall: ((record: BanecoCallRecord) => void) | undefined;
  /** The current token; null before the first authentication and after a 401 invalidated it. */
  #token: string | null = null;
  /** The authentication in flight, shared by every caller that needs a token meanwhile (single flight). */
  #authenticating: Promise<TokenReading & { calls: BanecoCallRecord[] }> | null = null;
  /** Tokens this client was given (the latest few), scrubbed from any text the bank sends back. */
  readonly #tokensSeen: string[] = [];

  constructor(options: BanecoClientOptions) {
    this.#config = options.config;
    this.#zone = options.serviceTimeZone;
    this.#cipher = new BanecoCipher(options.config.aesKey);
    this.#onCall = options.onCall;
  }

  /** POST api/qrsimple/generateQR: the bank issues the QR; its qrId becomes the QR's rail_reference. */
  generateQr(order: QrOrder): Promise<BanecoResult<GeneratedQr>> {
    if (!isCalendarDate(order.dueDate)) throw new Error('dueDate must be a real date yyyy-MM-dd');
    assertPositive(order.amountCentavos);
    const body: GenerateQrRequest = {
      transactionId: order.transactionId,
      accountCredit: this.#cipher.encrypt(this.#config.account),
      currency: 'BOB',
      amount: centavosToAmount(order.amountCentavos),
      description: order.description,
      dueDate: order.dueDate,
      singleUse: order.singleUse,
      modifyAmount: order.modifyAmount,
      ...(this.#config.branchCode === null ? {} : { branchCode: this.#config.branchCode }),
    };
    return this.#call('generateQr', 'POST', 'api/qrsimple/generateQR', body, readGenerateQrAnswer, []);
  }

  /** DELETE api/qrsimple/cancelQR. */
  cancelQr(qrId: string): Promise<BanecoResult<null>> {
    const body: CancelQrRequest = { qrId };
    return this.#call('cancelQr', 'DELETE', 'api/qrsimple/cancelQR', body, readCancelQrAnswer, []);
  }

  /** GET api/qrsimple/v2/statusQR/{qrId}: the QR's state and the payments listed on it. */
  statusQr(qrId: string): Promise<BanecoResult<QrStatusReading>> {
    return this.#call('statusQr', 'GET', `api/qrsimple/v2/statusQR/${encodeURIComponent(qrId)}`, undefined,
      (answer) => readStatusQrAnswer(answer, this.#zone), []);
  }

  /** GET api/qrsimple/v2/paidQR/{yyyyMMdd}: the QRs paid on a business day (yyyy-MM-dd). */
  paidQr(date: string): Promise<BanecoResult<{ payments: PaymentReading[] }>> {
    return this.#call('paidQr', 'GET', `api/qrsimple/v2/paidQR/${wirePathDate(date)}`, undefined,
      (answer) => readPaidQrAnswer(answer, this.#zone), []);
  }

  /** POST api/accounts/history of the platform's account, from startDate to endDate (yyyy-MM-dd). */
  accountHistory(startDate: string, endDate: string): Promise<BanecoResult<AccountHistory>> {
    if (!isCalendarDate(startDate) || !isCalendarDate(endDate)) throw new Error('history dates must be real dates yyyy-MM-dd');
    const body: AccountHistoryRequest = { accountCode: this.#cipher.encrypt(this.#config.account), startDate, endDate };
    return this.#call('accountHistory', 'POST', 'api/accounts/history', body, (answer) => readAccountHistoryAnswer(answer, this.#zone), []);
  }

  /**
   * POST api/batchPayment/upload. An `unknown` outcome means the bank may hold the batch: the caller
   * never sends it again by itself (§14.4).
   */
  uploadBatch(batch: BatchOrder): Promise<BanecoResult<UploadedBatch>> {
    if (batch.items.length === 0 || batch.items.length > MAX_BATCH_ITEMS) throw new RangeError(`a batch holds 1 to ${MAX_BATCH_ITEMS} transfers`);
    const aml = { AMLSource: this.#config.amlSource, AMLDestination: this.#config.amlDestination };
    const accounts: string[] = [];
    let total = 0;
    const paymentList = batch.items.map((item): BatchPayment => {
      assertPositive(item.amountCentavos);
      total += item.amountCentavos; // whole centavos: exact
      const account = revealAccountNumber(item.accountNumber);
      accounts.push(account);
      return {
        batchDetailId: item.batchDetailId,
        amount: centavosToAmount(item.amountCentavos),
        accountCode: this.#cipher.encrypt(account),
        accountTypeCode: 'CCAD',
        bankCode: String(item.bankCode),
        beneficiaryName: item.beneficiaryName,
        note: item.note,
        AMLData: aml,
      };
    });
    if (!Number.isSafeInteger(total)) throw new RangeError('the batch total is beyond exact arithmetic');
    const body: BatchUploadRequest = {
      batchId: batch.batchId,
      type: 'PROVIDERS',
      description: 'Pagos a comercios',
      detailedDebit: true,
      accountCode: this.#cipher.encrypt(this.#config.account),
      batchCurrency: 'BOB',
      batchAmount: centavosToAmount(total as Centavos),
      AMLData: aml,
      paymentCount: paymentList.length,
      paymentList,
    };
    return this.#call('uploadBatch', 'POST', 'api/batchPayment/upload', body, readBatchUploadAnswer, accounts);
  }

  /** Text the bank sent outside a call's answer (a callback's reason), made safe to keep as #clean makes answers. */
  cleanText(text: string): string {
    return this.#clean(text, []);
  }

  toJSON(): string {
    return 'BanecoClient';
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return 'BanecoClient';
  }

  /**
   * One operation: a token (shared), the request, and on HTTP 401 one repeat with a token newer than the
   * one refused. `accounts`: the full account numbers the request carries, scrubbed from the bank's text.
   */
  async #call<T>(operation: BanecoOperation, method: HttpMethod, path: string, body: unknown,
    read: (answer: unknown) => Reading<T>, accounts: string[]): Promise<BanecoResult<T>> {
    const calls: BanecoCallRecord[] = [];
    for (let attempt = 1; ; attempt += 1) {
      const token = await this.#currentToken(calls);
      if (!token.ok) return { ...token.result, calls };
      const result = await this.#send(operation, method, path, body, token.token, read, calls);
      if (result.kind !== 'unauthorized') return this.#toResult(result, calls, accounts);
      // A 401 invalidates only the token it answered: a newer one, if another caller already got it, is used as is.
      this.#invalidate(token.token);
      if (attempt === 2) {
        return { outcome: 'refused', reason: 'credentials', responseCode: null, httpStatus: 401, message: 'the bank refused a fresh token (HTTP 401)', calls };
      }
    }
  }

  async #send<T>(operation: BanecoOperation, method: HttpMethod, path: string, body: unknown, bearer: string | null,
    read: (answer: unknown) => Reading<T>, calls: BanecoCallRecord[]): Promise<ExchangeResult<T>> {
    const started = performance.now();
    const result = await exchange({ method, url: this.#config.url + path, body, bearer, timeoutMs: this.#config.timeoutMs, read });
    const record: BanecoCallRecord = {
      operation,
      outcome: result.kind,
      httpStatus: result.httpStatus,
      latencyMs: Math.round(performance.now() - started),
    };
    calls.push(record);
    try {
      this.#onCall?.(record);
    } catch {
      // The attempt log's trouble is not the bank's answer: the call's outcome stands.
    }
    return result;
  }

  /** The current token, or the one the authentication in flight (started now if none) brings. */
  async #currentToken(calls: BanecoCallRecord[]): Promise<TokenReading> {
    if (this.#token !== null) return { ok: true, token: this.#token };
    if (this.#authenticating === null) {
      this.#authenticating = this.#authenticate().finally(() => {
        this.#authenticating = null;
      });
    }
    const reading = await this.#authenticating;
    calls.push(...reading.calls);
    return reading;
  }

  async #authenticate(): Promise<TokenReading & { calls: BanecoCallRecord[] }> {
    const calls: BanecoCallRecord[] = [];
    const body: AuthenticateRequest = { userName: this.#config.user, password: this.#cipher.encrypt(this.#config.password) };
    const result = await this.#send('authenticate', 'POST', 'api/authentication/authenticate', body, null, readAuthenticateAnswer, calls);
    if (result.kind === 'ok') {
      this.#token = result.value.token;
      this.#tokensSeen.unshift(result.value.token);
      this.#tokensSeen.length = Math.min(this.#tokensSeen.length, 4);
      return { ok: true, token: result.value.token, calls };
    }
    // The operation was never sent: a refusal of our credentials refuses it; anything else leaves it unknown (retry later).
    if (result.kind === 'refused' || result.kind === 'unauthorized') {
      const message = result.kind === 'refused' ? this.#clean(result.message, []) : 'HTTP 401';
      return {
        ok: false,
        calls,
        result: { outcome: 'refused', reason: 'credentials', responseCode: result.kind === 'refused' ? result.responseCode : null, httpStatus: result.httpStatus, message: `authentication refused: ${message}`, calls: [] },
      };
    }
    return {
      ok: false,
      calls,
      result: { outcome: 'unknown', reason: 'no_token', httpStatus: result.httpStatus, problem: `authentication ${result.reason}: ${this.#clean(result.problem, [])}`, calls: [] },
    };
  }

  #invalidate(refused: string): void {
    if (this.#token === refused) this.#token = null;
  }

  #toResult<T>(result: Exclude<ExchangeResult<T>, { kind: 'unauthorized' }>, calls: BanecoCallRecord[], accounts: string[]): BanecoResult<T> {
    switch (result.kind) {
      case 'ok':
        return { outcome: 'ok', value: result.value, calls };
      case 'refused':
        return { outcome: 'refused', reason: result.reason, responseCode: result.responseCode, httpStatus: result.httpStatus, message: this.#clean(result.message, accounts), calls };
      case 'unknown':
        return { outcome: 'unknown', reason: result.reason, httpStatus: result.httpStatus, problem: this.#clean(result.problem, accounts), calls };
      default:
        return assertNever(result);
    }
  }

  /**
   * The bank's text made safe to keep: control characters out, cut short, and any secret or full
   * account number it might echo replaced — the bank's gateway is not ours, so its messages are not trusted.
   */
  #clean(text: string, accounts: string[]): string {
    const numbers = [this.#config.account, ...accounts];
    // An account may come back without its hyphens: both spellings are scrubbed.
    const spellings = [...numbers, ...numbers.map((number) => number.replaceAll('-', ''))];
    const secrets = [this.#config.password, this.#config.aesKey, this.#config.callbackSecret, this.#config.user, ...this.#tokensSeen, ...spellings]
      .filter((secret) => secret.length >= 4)
      .sort((a, b) => b.length - a.length);
    let scrubbed = text;
    for (const secret of secrets) scrubbed = scrubbed.split(secret).join('[redacted]');
    // Any other account number it names (a beneficiary's, in a rejection's reason) keeps only its last four digits.
    scrubbed = scrubbed.replace(LONG_DIGIT_RUN, (run) => maskAccountNumber(run));
    return cleanBankText(scrubbed, MESSAGE_LENGTH);
  }
}

function assertPositive(amount: Centavos): void {
  if (!Number.isSafeInteger(amount) || amount <= 0) throw new RangeError('an amount sent to the bank is a positive whole number of centavos');
}

function assertNever(value: never): never {
  throw new Error(`unhandled exchange result ${JSON.stringify(value)}`);
}
