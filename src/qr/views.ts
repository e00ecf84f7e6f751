// The QR module's API views: pure functions from rows to the JSON the API answers and events carry
// (docs/architecture.md#conventions). The status shown is always the effective one (state.ts).
import type { Config } from '../config.ts';
import { centavos, centavosToAmount } from '../money.ts';
import type { PaymentView, QrEventView, QrView } from './schemas.ts';
import { effectiveState } from './state.ts';
import type { PaymentRow, QrWithLastPayment } from './store.ts';


export function toPaymentView(payment: PaymentRow): PaymentView {
  return {
    id: payment.id,
    qr_id: payment.qr_id,
    business_code: payment.business_code,
    amount: centavosToAmount(payment.amount_centavos),
    fee: centavosToAmount(payment.fee_centavos),
    net: centavosToAmount(centavos(payment.amount_centavos - payment.fee_centavos)),
    currency: 'BOB',
    status: payment.status,
    payer: {
      source_bank: payment.source_bank,
      account_number: payment.account_number.masked,
      account_titular: payment.account_titular,
    },
    paid_at: payment.paid_at.toISOString(),
    movement_id: payment.movement_id,
    amount_refunded: centavosToAmount(payment.amount_refunded_centavos),
    late: payment.late,
    rail: payment.rail,
    rail_reference: payment.rail_reference,
  };
}

export function qrUrlOf(config: Pick<Config, 'publicBaseUrl'>, payToken: string): string {
  return `${config.publicBaseUrl.replace(/\/+$/, '')}/pay/${payToken}`;
}

/** The QR resource without its image (the form events carry). */
export function toQrEventView(config: Pick<Config, 'publicBaseUrl'>, { qr, lastPayment }: QrWithLastPayment, now: Date): QrEventView {
  const state = effectiveState(qr, now);
  return {
    id: qr.id,
    business_code: qr.business_code,
    status: state.status,
    amount: qr.amount_centavos === null ? null : centavosToAmount(qr.amount_centavos),
    currency: 'BOB',
    modify_amount: qr.modify_amount,
    is_multi_use: qr.is_multi_use,
    description: qr.description,
    qr_expiration: qr.qr_expiration,
    expires_at: qr.expires_at?.toISOString() ?? null,
    qr_url: qrUrlOf(config, qr.pay_token),
    qr_payload: qr.qr_payload,
    external_reference: qr.external_reference,
    min_amount: qr.min_amount_centavos === null ? null : centavosToAmount(qr.min_amount_centavos),
    max_amount: qr.max_amount_centavos === null ? null : centavosToAmount(qr.max_amount_centavos),
    max_payments: qr.max_payments,
    payments_count: qr.payments_count,
    amount_collected: centavosToAmount(qr.amount_collected_centavos),
    last_payment: lastPayment ? toPaymentView(lastPayment) : null,
    paid_at: qr.paid_at?.toISOString() ?? null,
    canceled_at: state.canceledAt?.toISOString() ?? null,
    cancel_reason: state.cancelReason,
    rail: qr.rail,
    rail_reference: qr.rail_reference,
    created_at: qr.created_at.toISOString(),
    updated_at: state.updatedAt.toISOString(),
  };
}

export function toQrView(config: Pick<Config, 'publicBaseUrl'>, found: QrWithLastPayment, now: Date): QrView {
  return { ...toQrEventView(config, found, now), qr_image: found.qr.qr_image };
}
