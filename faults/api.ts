// The service's API as the suite uses it: operator set-up calls, and a money client that retries every request until it gets an answer and records what was acknowledged.
import { randomUUID } from 'node:crypto';
import { describe, errorCode, request, type Exchange, type RequestOptions } from './http.ts';
import type { Scope } from './scope.ts';

export interface Merchant {
  businessCode: number;
  apiKey: string;
}

/** Operator and set-up calls: these run before any fault, so any failure is fatal to the scenario. */
export async function must(baseUrl: string, method: string, path: string, options: RequestOptions, expected: number): Promise<Record<string, unknown>> {
  const exchange = await request(baseUrl, method, path, options);
  if (exchange.status !== expected) throw new Error(`set-up call failed: ${describe(exchange)} ${JSON.stringify(exchange.body)?.slice(0, 300)}`);
  return exchange.body as Record<string, unknown>;
}

export async function createMerchant(baseUrl: string, adminToken: string, name: string): Promise<Merchant> {
  const body = await must(baseUrl, 'POST', '/admin/v1/merchants', { adminToken, body: { name, ach_enabled: true } }, 201);
  return { businessCode: body.business_code as number, apiKey: body.api_key as string };
}

export async function registerWebhookEndpoint(baseUrl: string, merchant: Merchant, url: string): Promise<{ id: string; secret: string }> {
  const body = await must(baseUrl, 'POST', '/api/v2/webhook-endpoints', { apiKey: merchant.apiKey, body: { url } }, 201);
  return { id: body.id as string, secret: body.secret as string };
}

export interface LedgerCheck { balances_checked: number; ok: boolean; violations: unknown[] }

export async function ledgerCheck(baseUrl: string, adminToken: string): Promise<LedgerCheck> {
  return (await must(baseUrl, 'GET', '/admin/v1/ledger/check', { adminToken }, 200)) as unknown as LedgerCheck;
}

/** What the clients were told: only these count as acknowledged writes. */
export class Acks {
  /** QR create Idempotency-Key → the QR its 201 named. */
  readonly qrs = new Map<string, { id: string; businessCode: number }>();
  /** QR id → its payment, acknowledged by a 201 or learnt by reading the QR after a lost answer. */
  readonly payments = new Map<string, { paymentId: number; businessCode: number; how: '201' | 'read' }>();
  /** Transfer Idempotency-Key → the transfer its 201 named. */
  readonly transfers = new Map<string, { id: number; businessCode: number; amountCentavos: number }>();
  /** Keys whose final (stored) answer was 400 INSUFFICIENT_FUNDS. */
  readonly insufficient = new Set<string>();
  /** Answers that contradict the contract (a replay naming another id, an unexpected status, …). */
  readonly problems: string[] = [];
  /** Requests that never got an answer within the operation bound. */
  readonly unanswered: string[] = [];
}

export interface MoneyClientOptions {
  baseUrl: () => string;
  scope: Scope;
  acks: Acks;
  /** Every exchange, for the scenario's own analysis (latency, statuses during an outage). */
  onExchange?: (exchange: Exchange) => void;
  /** Pause between retries. The suite retries faster than Retry-After (5 s) to measure recovery precisely. */
  retryDelayMs?: number;
  /** Longest one operation may keep retrying before it counts as unanswered. */
  operationBoundMs?: number;
  requestTimeoutMs?: number;
}

/** Statuses after which the outcome is unknown or not yet decided, so the same request is sent again. */
function isRetryable(exchange: Exchange): boolean {
  if (exchange.status === null) return true; // lost answer: refused, reset, timed out
  if (exchange.status >= 500) return true; // 503 (database down) — and a 500, which the scenario also flags
  if (exchange.status === 429) return true;
  return exchange.status === 409 && errorCode(exchange) === 'IDEMPOTENCY_KEY_IN_USE';
}

export class MoneyClient {
  constructor(private readonly options: MoneyClientOptions) {}

  private get acks(): Acks { return this.options.acks; }

  /** Sends until an answer that is final; returns it and whether an earlier attempt's outcome is unknown. */
  private async untilAnswered(label: string, send: () => Promise<Exchange>): Promise<{ final: Exchange | null; outcomeUnknown: boolean; attempts: number }> {
    const deadline = Date.now() + (this.options.operationBoundMs ?? 60_000);
    let outcomeUnknown = false;
    let attempts = 0;
    for (;;) {
      const exchange = await send();
      attempts++;
      this.options.onExchange?.(exchange);
      if (!isRetryable(exchange)) return { final: exchange, outcomeUnknown, attempts };
      // A lost answer or a 5xx may have come after the commit: the next answer must be read with that in mind.
      if (exchange.status === null || exchange.status >= 500) outcomeUnknown = true;
      if (Date.now() >= deadline) {
        this.acks.unanswered.push(`${label}: last ${describe(exchange)} after ${attempts} attempts`);
        return { final: null, outcomeUnknown, attempts };
      }
      await this.options.scope.sleep((this.options.retryDelayMs ?? 200) * (0.75 + Math.random() / 2));
    }
  }

  private send(method: string, path: string, route: string, merchant: Merchant, body?: unknown, headers?: Record<string, string>) {
    return request(this.options.baseUrl(), method, path, { route, apiKey: merchant.apiKey, body, headers, timeoutMs: this.options.requestTimeoutMs ?? 20_000 });
  }

  /** Creates a single-use QR with an Idempotency-Key; retries reuse the key, so one QR exists however many answers were lost. */
  async createQr(merchant: Merchant, amount = '10.00'): Promise<string | null> {
    const key = randomUUID();
    const body = { business_code: merchant.businessCode, amount, description: `faults ${key.slice(0, 8)}` };
    const { final } = await this.untilAnswered(`QR create ${key}`, () =>
      this.send('POST', '/api/v2/simple-qrs', 'POST /api/v2/simple-qrs', merchant, body, { 'Idempotency-Key': key }));
    if (!final) return null;
    if (final.status !== 201) {
      this.acks.problems.push(`QR create ${key}: ${describe(final)}`);
      return null;
    }
    const id = (final.body as { id: string }).id;
    this.acks.qrs.set(key, { id, businessCode: merchant.businessCode });
    return id;
  }

  /**
   * Pays a single-use QR through the sandbox. The payment endpoint takes no Idempotency-Key, so after a
   * lost answer the retry may meet 409 QR_NOT_PAYABLE: the payment happened. The client then learns the
   * truth by reading the QR (PAID, one payment) and its payments list, and records that payment as
   * acknowledged-by-read. A 409 without a lost answer before it is a contradiction.
   */
  async payQr(merchant: Merchant, qrId: string): Promise<number | null> {
    const { final, outcomeUnknown } = await this.untilAnswered(`QR pay ${qrId}`, () =>
      this.send('POST', `/api/v2/sandbox/simple-qrs/${qrId}/payments`, 'POST /api/v2/sandbox/simple-qrs/:id/payments', merchant, {}));
    if (!final) return null;
    if (final.status === 201) {
      const id = (final.body as { id: number }).id;
      this.acks.payments.set(qrId, { paymentId: id, businessCode: merchant.businessCode, how: '201' });
      return id;
    }
    if (final.status === 409 && errorCode(final) === 'QR_NOT_PAYABLE' && outcomeUnknown) {
      const read = await this.untilAnswered(`QR read ${qrId}`, () =>
        this.send('GET', `/api/v2/simple-qrs/${qrId}/payments`, 'GET /api/v2/simple-qrs/:id/payments', merchant));
      const page = read.final?.body as { data?: Array<{ id: number }> } | undefined;
      if (read.final?.status === 200 && page?.data?.length === 1) {
        const id = page.data[0]!.id;
        this.acks.payments.set(qrId, { paymentId: id, businessCode: merchant.businessCode, how: 'read' });
        return id;
      }
      this.acks.problems.push(`QR pay ${qrId}: 409 QR_NOT_PAYABLE after a lost answer, but its payments read ${read.final ? describe(read.final) : 'no answer'} ${JSON.stringify(page?.data?.length)}`);
      return null;
    }
    this.acks.problems.push(`QR pay ${qrId}: ${describe(final)}${outcomeUnknown ? ' (after a lost answer)' : ''}`);
    return null;
  }

  /** Creates a transfer with an Idempotency-Key, retried with the same key; accounts ending -0000 fail in the sandbox rail. */
  async createTransfer(merchant: Merchant, amountCentavos: number, failing = false): Promise<number | null> {
    const key = randomUUID();
    const body = {
      business_code: merchant.businessCode,
      amount: (amountCentavos / 100).toFixed(2),
      currency: 'BOB',
      destination: { type: 'bank_account', bank_code: 1001, account_number: failing ? '1000-2000-0000' : '1000-2000-3000', account_titular: 'Ana Pérez' },
    };
    let firstId: number | null = null;
    const { final } = await this.untilAnswered(`transfer ${key}`, async () => {
      const exchange = await this.send('POST', '/api/v2/transfers', 'POST /api/v2/transfers', merchant, body, { 'Idempotency-Key': key });
      // Every 201 for this key must name the same transfer, replayed or not.
      if (exchange.status === 201) {
        const id = (exchange.body as { id: number }).id;
        if (firstId !== null && firstId !== id) this.acks.problems.push(`transfer key ${key} answered 201 with ids ${firstId} and ${id}`);
        firstId ??= id;
      }
      return exchange;
    });
    if (!final) return null;
    if (final.status === 201) {
      const id = (final.body as { id: number }).id;
      this.acks.transfers.set(key, { id, businessCode: merchant.businessCode, amountCentavos });
      return id;
    }
    if (final.status === 400 && errorCode(final) === 'INSUFFICIENT_FUNDS') {
      this.acks.insufficient.add(key);
      return null;
    }
    this.acks.problems.push(`transfer ${key}: ${describe(final)}`);
    return null;
  }

  /** One POS round: a QR, its payment, and a transfer of part of it (one in eight to a failing account). */
  async round(merchant: Merchant, n: number): Promise<void> {
    const qrId = await this.createQr(merchant);
    if (qrId) await this.payQr(merchant, qrId);
    await this.createTransfer(merchant, 100 + (n % 5) * 50, n % 8 === 7);
  }
}
