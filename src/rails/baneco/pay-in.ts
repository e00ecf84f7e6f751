// Banco Económico's pay-in behind the rail-neutral PayInRail (src/rails/pay-in.ts): generateQR, cancelQR,
// statusQR and paidQR through the client, each call's HTTP exchanges written to the attempt log, and the
// bank's shapes turned into neutral terms here — nothing above sees a field of the bank's.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { BanecoConfig } from '../../config.ts';
import { BankMaskedAccountNumber } from '../../masking.ts';
import type { RailAttemptLog } from '../attempts.ts';
import type {
  IssuedRailQr, PayInRail, RailPayment, RailPaymentHint, RailPayments, RailQrOrder, RailQrState, UnmatchedRailPayment,
} from '../pay-in.ts';
import type { RailOutcome } from '../outcome.ts';
import type { BanecoClient } from './client.ts';
import { railOutcomeOf } from './outcome.ts';
import { readPaymentNotification, wireDateOf, type PaymentReading } from './wire.ts';

const DAY_MS = 86_400_000;

export class BanecoPayIn implements PayInRail {
  readonly pollIntervalMs: number;
  readonly #secretDigest: Buffer;

  constructor(
    private readonly client: BanecoClient,
    private readonly config: BanecoConfig,
    private readonly zone: string,
    private readonly attempts: RailAttemptLog,
  ) {
    this.pollIntervalMs = config.pollIntervalMs;
    this.#secretDigest = digest(config.callbackSecret);
  }

  async issueQr(order: RailQrOrder): Promise<RailOutcome<IssuedRailQr>> {
    // §14.3: the date of expires_at in SERVICE_TIMEZONE, or of creation + BANECO_QR_DUE_DAYS.
    const due = order.expiresAt ?? new Date(order.issuedAt.getTime() + this.config.qrDueDays * DAY_MS);
    const result = await this.client.generateQr({
      transactionId: order.qrId,
      amountCentavos: order.amountCentavos,
      description: order.description,
      dueDate: wireDateOf(due, this.zone),
      singleUse: order.singleUse,
      modifyAmount: order.modifyAmount,
    });
    return railOutcomeOf(this.attempts, result, (qr) => ({ railReference: qr.qrId, pngBase64: qr.qrImage }));
  }

  async cancelQr(qrReference: string): Promise<RailOutcome<null>> {
    return railOutcomeOf(this.attempts, await this.client.cancelQr(qrReference), () => null);
  }

  async readQr(qrReference: string): Promise<RailOutcome<RailPayments & { state: RailQrState }>> {
    return railOutcomeOf(this.attempts, await this.client.statusQr(qrReference), (reading) => ({
      state: reading.state,
      ...paymentsOf(reading.payments),
    }));
  }

  async paymentsOfDay(day: string): Promise<RailOutcome<RailPayments>> {
    return railOutcomeOf(this.attempts, await this.client.paidQr(day), (reading) => paymentsOf(reading.payments));
  }

  readPaymentHint(body: unknown): RailPaymentHint {
    const reading = readPaymentNotification(body, this.zone);
    return reading.ok ? { kind: 'qr', qrReference: reading.value.qrId } : { kind: 'unreadable', problem: reading.problem };
  }

  isCallbackSecret(secret: string): boolean {
    // Digests of equal length, so neither the length nor any prefix of the secret leaks through timing.
    return timingSafeEqual(digest(secret), this.#secretDigest);
  }

  toJSON(): string {
    return 'BanecoPayIn';
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

function paymentsOf(readings: readonly PaymentReading[]): RailPayments {
  const payments: RailPayment[] = [];
  const unmatched: UnmatchedRailPayment[] = [];
  for (const reading of readings) {
    if (reading.kind === 'payment') {
      payments.push({
        qrReference: reading.qrId,
        railReference: reading.transactionId,
        amountCentavos: reading.amountCentavos,
        paidAt: reading.paidAt,
        payerBankCode: reading.senderBankCode,
        payerName: reading.senderName,
        // The reader masks a whole number; an empty one (nothing to mask) is shown as stars.
        payerAccount: new BankMaskedAccountNumber(reading.senderAccount.includes('*') ? reading.senderAccount : '****'),
      });
    } else {
      unmatched.push({ qrReference: reading.qrId, railReference: reading.transactionId, currency: reading.currency, problem: reading.problem });
    }
  }
  return { payments, unmatched };
}
