// Requests the benchmarks send, written once.
import { randomUUID } from 'node:crypto';
import type autocannon from 'autocannon';

export interface BenchMerchant { businessCode: number; apiKey: string }

/**
 * POST /api/v2/transfers of 1.00 BOB, round-robin over `merchants`, each with a fresh Idempotency-Key
 * (a repeated key would be answered from the stored outcome, not written).
 */
export function transferRequests(merchants: readonly BenchMerchant[]): autocannon.Request[] {
  let next = 0;
  return [{
    method: 'POST',
    path: '/api/v2/transfers',
    setupRequest: (request) => {
      const merchant = merchants[next++ % merchants.length]!;
      return {
        ...request,
        headers: { 'content-type': 'application/json', 'x-api-key': merchant.apiKey, 'idempotency-key': randomUUID() },
        body: JSON.stringify({
          business_code: merchant.businessCode, amount: '1.00', currency: 'BOB', reference: 'bench',
          destination: { type: 'bank_account', bank_code: 1001, account_number: '1000-2000-3000', account_titular: 'Bench Payee' },
        }),
      };
    },
  }];
}

/**
 * GET /api/v2/simple-qrs/{id} (a POS polling its QR), round-robin over `qrIds`, with the merchant's key and,
 * when `etags` is given, each QR's ETag as If-None-Match (answered 304).
 */
export function qrReadRequests(qrIds: readonly string[], apiKey: string, etags?: ReadonlyMap<string, string>): autocannon.Request[] {
  let next = 0;
  return [{
    method: 'GET',
    setupRequest: (request) => {
      const id = qrIds[next++ % qrIds.length]!;
      return { ...request, path: `/api/v2/simple-qrs/${id}`, headers: { 'x-api-key': apiKey, ...(etags ? { 'if-none-match': etags.get(id)! } : {}) } };
    },
  }];
}
