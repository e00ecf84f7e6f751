// The control API under `/_control/`: what tests and people use to play the parts the real bank's
// other customers play (a payer paying a QR, the bank's back office deciding a batch item) and to turn
// the knobs. Plain JSON; errors are `{ "error": text }` with 400 (bad request), 404 (unknown thing) or
// 409 (the bank's rules refuse it). It has no authentication: the simulator listens on 127.0.0.1 only.
import { laPaz } from './clock.ts';
import type { CallbackDispatcher } from './callbacks.ts';
import { applyKnobs, type Knobs } from './knobs.ts';
import type { Bank, PayOptions } from './state.ts';
import { Refusal, toAmount } from './validate.ts';
import { historyLine, paymentQr } from './wire.ts';

/** What the control routes act on (a running simulator). */
export interface ControlContext {
  bank: Bank;
  knobs: Knobs;
  callbacks: CallbackDispatcher;
  /** Environment variables that point the service at this simulator. */
  env: Record<string, string>;
  reset(): void;
}

export interface ControlAnswer {
  status: number;
  body: unknown;
}

const fail = (status: number, error: string): ControlAnswer => ({ status, body: { error } });

export function snapshot(context: ControlContext): Record<string, unknown> {
  const { bank } = context;
  return {
    account: {
      account: bank.config.account,
      currency: 'BOB',
      balance: toAmount(bank.balanceCents),
      reserved: toAmount(bank.reservedCents),
      available: toAmount(bank.balanceCents - bank.reservedCents),
    },
    liveTokens: bank.liveTokens(),
    qrs: [...bank.qrs.values()].map((qr) => ({
      qrId: qr.qrId,
      transactionId: qr.transactionId,
      currency: qr.currency,
      amount: toAmount(qr.amountCents),
      description: qr.description,
      dueDate: qr.dueDate,
      singleUse: qr.singleUse,
      modifyAmount: qr.modifyAmount,
      branchCode: qr.branchCode,
      status: qr.status,
      statusQRCode: qr.status === 'cancelled' ? 9 : qr.status === 'paid' ? 1 : 0,
      createdAt: new Date(qr.createdAt).toISOString(),
      payload: qr.payload,
      payments: qr.payments.map(paymentQr),
    })),
    payments: bank.payments.map((payment) => ({ ...paymentQr(payment), knownQr: payment.knownQr })),
    batches: bank.batches.map((batch) => ({
      bankBatchId: batch.bankBatchId,
      batchId: batch.batchId,
      type: batch.type,
      description: batch.description,
      detailedDebit: batch.detailedDebit,
      currency: batch.currency,
      amount: toAmount(batch.amountCents),
      uploadedAt: new Date(batch.uploadedAt).toISOString(),
      items: batch.items.map((item) => ({
        batchDetailId: item.batchDetailId,
        amount: toAmount(item.amountCents),
        account: item.account,
        accountTypeCode: item.accountTypeCode,
        bankCode: item.bankCode,
        beneficiaryName: item.beneficiaryName,
        note: item.note,
        status: item.status,
        descriptionStatus: item.descriptionStatus ?? null,
        transactionIdDebit: item.transactionIdDebit ?? null,
        transactionIdCredit: item.transactionIdCredit ?? null,
      })),
    })),
    history: bank.history.map(historyLine),
    callbacks: context.callbacks.attempts,
    pendingCallbacks: context.callbacks.pending(),
    knobs: context.knobs,
    today: laPaz(Date.now()).date,
  };
}

function payOptions(body: unknown): PayOptions | string {
  if (body === undefined) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'the body must be a JSON object';
  const given = body as Record<string, unknown>;
  const known = ['amount', 'currency', 'senderName', 'senderBankCode', 'senderAccount', 'paidAt', 'force'];
  const unknown = Object.keys(given).filter((key) => !known.includes(key));
  if (unknown.length > 0) return `unknown field(s) ${unknown.join(', ')}; allowed: ${known.join(', ')}`;
  if (given.amount !== undefined && typeof given.amount !== 'number') return 'amount must be a number';
  if (given.currency !== undefined && given.currency !== 'BOB' && given.currency !== 'USD') return 'currency must be BOB or USD';
  for (const key of ['senderName', 'senderBankCode', 'senderAccount', 'paidAt'] as const) {
    if (given[key] !== undefined && (typeof given[key] !== 'string' || (given[key] as string).length > 100)) return `${key} must be a text of at most 100 characters`;
  }
  if (given.force !== undefined && typeof given.force !== 'boolean') return 'force must be true or false';
  return given as PayOptions;
}

export function control(context: ControlContext, method: string, path: string[], body: unknown): ControlAnswer {
  const { bank } = context;
  const route = `${method} ${path.map((part, index) => (index === 0 ? part : '*')).join('/')}`;
  try {
    if (method === 'GET' && path.join('/') === 'state') return { status: 200, body: snapshot(context) };
    if (method === 'GET' && path.join('/') === 'callbacks') return { status: 200, body: { callbacks: context.callbacks.attempts, pending: context.callbacks.pending() } };
    if (method === 'GET' && path.join('/') === 'env') return { status: 200, body: context.env };
    if (method === 'GET' && path.join('/') === 'knobs') return { status: 200, body: context.knobs };
    if (method === 'POST' && path.join('/') === 'knobs') {
      const problems = applyKnobs(context.knobs, body);
      return problems.length > 0 ? { status: 400, body: { error: problems.join('; '), problems } } : { status: 200, body: context.knobs };
    }
    if (method === 'POST' && path.join('/') === 'tokens/expire') return { status: 200, body: { expired: bank.expireTokens() } };
    if (method === 'POST' && path.join('/') === 'reset') {
      context.reset();
      return { status: 200, body: { reset: true } };
    }
    // POST /_control/qrs/{qrId}/pay
    if (method === 'POST' && path.length === 3 && path[0] === 'qrs' && path[2] === 'pay') {
      const options = payOptions(body);
      if (typeof options === 'string') return fail(400, options);
      const payment = bank.pay(path[1]!, options);
      return { status: 201, body: { payment: paymentQr(payment), knownQr: payment.knownQr } };
    }
    // POST /_control/batches/{batchId}/items/{batchDetailId}/decide
    if (method === 'POST' && path.length === 5 && path[0] === 'batches' && path[2] === 'items' && path[4] === 'decide') {
      const given = (typeof body === 'object' && body !== null && !Array.isArray(body) ? body : {}) as Record<string, unknown>;
      if (given.status !== 'ACEP' && given.status !== 'RECH') return fail(400, 'status must be ACEP or RECH');
      if (given.descriptionStatus !== undefined && (typeof given.descriptionStatus !== 'string' || given.descriptionStatus.length > 255)) {
        return fail(400, 'descriptionStatus must be a text of at most 255 characters');
      }
      const batch = bank.findBatch(path[1]!);
      if (!batch) return fail(404, `no batch ${path[1]} (by batchId or bankBatchId)`);
      const item = batch.items.find((each) => each.batchDetailId === path[3]);
      if (!item) return fail(404, `batch ${batch.batchId} has no item ${path[3]}`);
      bank.decide(batch, item, given.status, given.descriptionStatus as string | undefined);
      return { status: 200, body: { bankBatchId: batch.bankBatchId, batchId: batch.batchId, batchDetailId: item.batchDetailId, status: item.status, descriptionStatus: item.descriptionStatus ?? null } };
    }
    return fail(404, `no control route ${route}`);
  } catch (error) {
    if (error instanceof Refusal) return { status: error.code === 1 ? 400 : 409, body: { error: error.message, responseCode: error.code } };
    throw error;
  }
}
