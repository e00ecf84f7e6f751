// The sandbox's helpers (MODE=sandbox only; a live service answers them 404): play the payer's bank
// and the ACH network in tests and demos.
import { unwrap, type Api, type CallOptions } from './transport.ts';
import type { RequestBody } from './types.ts';

type PaymentBody = RequestBody<'/api/v2/sandbox/simple-qrs/{id}/payments', 'post'>;

export function sandbox(api: Api) {
  return {
    /** A payer's bank pays the QR (the amount defaults to the QR's). */
    payQr: (id: string, body: PaymentBody = {}, options: CallOptions = {}) =>
      unwrap(api.POST('/api/v2/sandbox/simple-qrs/{id}/payments', { params: { path: { id } }, body, signal: options.signal })),
    /** Money arrives for a QR that can no longer be paid: recorded and refunded in full at once. */
    latePayment: (id: string, body: PaymentBody = {}, options: CallOptions = {}) =>
      unwrap(api.POST('/api/v2/sandbox/simple-qrs/{id}/late-payments', { params: { path: { id } }, body, signal: options.signal })),
    /** Moves a transfer one step through the network (IN_TRANSIT, COMPLETED, FAILED…). */
    advanceTransfer: (id: number, body: RequestBody<'/api/v2/sandbox/transfers/{id}/advance', 'post'>, options: CallOptions = {}) =>
      unwrap(api.POST('/api/v2/sandbox/transfers/{id}/advance', { params: { path: { id } }, body, signal: options.signal })),
    advanceRefund: (id: string, body: RequestBody<'/api/v2/sandbox/refunds/{id}/advance', 'post'>, options: CallOptions = {}) =>
      unwrap(api.POST('/api/v2/sandbox/refunds/{id}/advance', { params: { path: { id } }, body, signal: options.signal })),
  };
}
