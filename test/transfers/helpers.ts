// Shared helpers of the transfer tests: funding a balance through the ledger fixture route, a valid body,
// and a POST with a fresh Idempotency-Key.
import { randomUUID } from 'node:crypto';
import type { TestApp, TestResponse } from '../helpers/app.ts';

export interface Merchant {
  businessCode: number;
  apiKey: string;
}

/** A merchant with the ACH module on, its balance funded with `amount` (a payment movement). */
export async function fundedMerchant(t: TestApp, amount: string | number = '1000.00'): Promise<Merchant> {
  const merchant = await t.createMerchant({ ach_enabled: true });
  if (Number(amount) > 0) await fund(t, merchant, amount);
  return merchant;
}

export async function fund(t: TestApp, merchant: Merchant, amount: string | number): Promise<void> {
  const response = await t.request('POST', '/test/movements', {
    apiKey: merchant.apiKey,
    headers: { 'idempotency-key': randomUUID() },
    body: { business_code: merchant.businessCode, amount, direction: 'credit' },
  });
  if (response.status !== 201) throw new Error(`funding answered ${response.status}: ${response.text}`);
}

export function transferBody(businessCode: number, overrides: Record<string, unknown> = {}): Record<string, any> {
  return {
    business_code: businessCode,
    amount: 100.25,
    currency: 'BOB',
    reference: 'Payroll Nov',
    destination: { type: 'bank_account', bank_code: 1014, account_number: '20150123455678', account_titular: 'Juan Pérez' },
    ...overrides,
  };
}

export function postTransfer(
  t: TestApp,
  merchant: Merchant,
  body: unknown,
  idempotencyKey: string | null = randomUUID(),
): Promise<TestResponse> {
  return t.request('POST', '/api/v2/transfers', {
    apiKey: merchant.apiKey,
    headers: idempotencyKey === null ? {} : { 'idempotency-key': idempotencyKey },
    body,
  });
}

export async function balanceOf(t: TestApp, merchant: Merchant): Promise<{ available: number; pending_out: number }> {
  const response = await t.request('GET', '/api/v2/balance', { apiKey: merchant.apiKey });
  if (response.status !== 200) throw new Error(`balance answered ${response.status}`);
  return { available: response.body.available, pending_out: response.body.pending_out };
}
