// The public status of a pay link (docs/api-reference.md#hosted-payment-page): what the pay page
// shows and polls, and the words of its status line.
import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { StringEnum } from '../../kernel/schemas.ts';
import type { MessageKey } from '../../kernel/i18n/messages-en.ts';
import { formatCentavos } from '../../money.ts';
import { formatWallClock } from '../../time.ts';
import { effectiveState } from '../state.ts';
import type { QrWithLastPayment } from '../store.ts';

/** The public status as /openapi.json documents it (the interface below is what the code builds). */
export const PublicStatusSchema = Type.Object({
  status: StringEnum(['ACTIVE', 'PAID', 'CANCELED'] as const),
  cancel_reason: Type.Union([StringEnum(['merchant', 'expired'] as const), Type.Null()]),
  amount: Type.Union([Type.String({ pattern: '^[0-9]+\\.[0-9]{2}$', example: '150.50' }), Type.Null()], { description: 'Asked, or paid once a single-use QR is PAID; null when the payer chooses' }),
  expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  paid_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'Single-use QRs only' }),
  paid_at_local: Type.Union([Type.String({ example: '2026-11-22 18:12:04' }), Type.Null()], { description: 'paid_at as wall-clock text in SERVICE_TIMEZONE' }),
}, { description: 'What anyone holding the pay link may read: no payer details, no payment ids, no count' });

/**
 * What anyone holding the pay link may read (docs/api-reference.md#hosted-payment-page): the state of the
 * QR and what the payer needs, never a payment id, another payer's amount or a multi-use QR's count.
 */
export interface PublicStatus {
  status: 'ACTIVE' | 'PAID' | 'CANCELED';
  cancel_reason: 'merchant' | 'expired' | null;
  /** What is asked (fixed or suggested amount), or what was paid once a single-use QR is PAID; null when the payer chooses. */
  amount: string | null;
  expires_at: string | null;
  /** Single-use QRs only: when it was paid (ISO 8601 UTC, and as the wall clock of the service time zone). */
  paid_at: string | null;
  paid_at_local: string | null;
}

export function toPublicStatus(found: QrWithLastPayment, now: Date, zone: string): PublicStatus {
  const { qr } = found;
  const state = effectiveState(qr, now);
  const paidOnce = !qr.is_multi_use && qr.paid_at !== null;
  const amountCentavos = paidOnce ? qr.amount_collected_centavos : qr.amount_centavos;
  return {
    status: state.status,
    cancel_reason: state.cancelReason,
    amount: amountCentavos === null ? null : formatCentavos(amountCentavos),
    expires_at: qr.expires_at?.toISOString() ?? null,
    paid_at: paidOnce ? qr.paid_at!.toISOString() : null,
    paid_at_local: paidOnce ? formatWallClock(qr.paid_at!, zone) : null,
  };
}

/** A strong ETag of exactly what the public status shows (a digest: its text holds quotes). */
export function publicStatusTag(status: PublicStatus): string {
  return `"${createHash('sha256').update(JSON.stringify(status)).digest('base64url').slice(0, 22)}"`;
}

/** The messages of the status line, by status and cancel reason; the page script shows the same ones. */
export const STATUS_KEYS = ['pay.status.ACTIVE', 'pay.status.PAID', 'pay.status.CANCELED_merchant', 'pay.status.CANCELED_expired'] as const;

export function statusKey(status: Pick<PublicStatus, 'status' | 'cancel_reason'>): MessageKey {
  if (status.status === 'CANCELED') return status.cancel_reason === 'expired' ? 'pay.status.CANCELED_expired' : 'pay.status.CANCELED_merchant';
  return `pay.status.${status.status}`;
}

