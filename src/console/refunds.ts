// Refunds from the owner's console (docs/console.md#qrs-payments-and-refunds; contract §13): what the payment page
// asks of the refunds capability, in the console's terms. No SQL and no rule of its own: a refund is made by
// the API's own create (refunds/service.ts createRefund: the window, what is left, the balance, the debit,
// the event), under the form's idempotency key and a console route name, so a double submit of the
// confirmation makes one refund — as the terminal's charge does (terminal.ts).
import type { AppContext } from '../context.ts';
import type { IdempotencyScope } from '../idempotency/service.ts';
import { ApiError, type ErrorBody } from '../kernel/errors.ts';
import { getMerchant } from '../merchants/service.ts';
import type { CreateRefundBody, RefundResource } from '../refunds/schemas.ts';
import * as refunds from '../refunds/service.ts';

/** The idempotency route of the console's refunds: its keys never meet the API's (POST /api/v2/refunds). */
export const CONSOLE_REFUND_ROUTE = 'POST /console/payments/{id}/refund';
/** How long a second tap of "Confirm" waits for the first to finish before it gives up (it then replays it). */
const KEY_IN_USE_RETRIES = 40;
const KEY_IN_USE_PAUSE_MS = 100;

export type RefundContext = Pick<AppContext, 'db' | 'config' | 'clock'>;

/**
 * Makes the refund of a confirmation form, once per form: a second submit of the same form replays the
 * first refund (or its stored INSUFFICIENT_FUNDS). Every refusal is thrown as the API's ApiError, nothing changed.
 */
export async function refundFromConsole(context: RefundContext, businessCode: number, body: CreateRefundBody, key: string): Promise<RefundResource> {
  // The API admits no key of a suspended merchant (MERCHANT_SUSPENDED); a console session does not get round that.
  if ((await getMerchant(context.db, businessCode)).status === 'suspended') throw new ApiError('MERCHANT_SUSPENDED');
  const idempotencyScope: IdempotencyScope = {
    caller: `merchant:${businessCode}`, // the merchant's scope, as kernel/principal.ts callerScope writes it
    route: CONSOLE_REFUND_ROUTE,
    key,
  };
  for (let attempt = 0; ; attempt++) {
    try {
      const result = await refunds.createRefund(context, { businessCode, idempotencyScope }, body, context.clock.now());
      if (result.statusCode === 201) return result.body as RefundResource;
      // A stored refusal (400 INSUFFICIENT_FUNDS) replayed for the key: the same refusal again.
      throw new ApiError((result.body as Partial<ErrorBody>).code ?? 'INSUFFICIENT_FUNDS');
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'IDEMPOTENCY_KEY_IN_USE' || attempt >= KEY_IN_USE_RETRIES) throw error;
      await new Promise((resolve) => setTimeout(resolve, KEY_IN_USE_PAUSE_MS));
    }
  }
}
