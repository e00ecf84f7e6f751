// Merchants the load of a benchmark comes from: created through the operator API of the service under
// test, and funded straight through the ledger (a credit with its journal entry, as a payment would be).
import type { Database } from '../../src/db/database.ts';
import * as ledger from '../../src/ledger/service.ts';
import { centavos } from '../../src/money.ts';
import type { BenchMerchant } from './requests.ts';

/**
 * `count` merchants with ACH pay-outs enabled (POST /admin/v1/merchants), `concurrency` at a time; in
 * business-code order. `pricing`: their price plan's fields (else the service's default plan).
 */
export async function createMerchants(
  serviceUrl: string, adminToken: string, count: number, namePrefix = 'Bench', concurrency = 1, pricing?: Record<string, number>,
): Promise<BenchMerchant[]> {
  const createOne = async (i: number): Promise<BenchMerchant> => {
    const response = await fetch(`${serviceUrl}/admin/v1/merchants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `${namePrefix} ${i}`, ach_enabled: true, ...(pricing ? { pricing } : {}) }),
    });
    if (!response.ok) throw new Error(`POST /admin/v1/merchants: ${response.status} ${await response.text()}`);
    const body = (await response.json()) as { business_code: number; api_key: string };
    return { businessCode: body.business_code, apiKey: body.api_key };
  };
  const merchants: BenchMerchant[] = [];
  for (let i = 0; i < count; i += concurrency) {
    merchants.push(...await Promise.all(Array.from({ length: Math.min(concurrency, count - i) }, (_, j) => createOne(i + j))));
  }
  return merchants.sort((a, b) => a.businessCode - b.businessCode);
}

/** Credits each merchant `amountCentavos`, one transaction each, `concurrency` at a time. */
export async function fundMerchants(db: Database, merchants: readonly BenchMerchant[], amountCentavos = 100_000_000, concurrency = 1): Promise<void> {
  const fundOne = (merchant: BenchMerchant) => db.transaction((tx) => ledger.credit(tx, {
    businessCode: merchant.businessCode, amountCentavos: centavos(amountCentavos), reference: 'bench funding', snapshot: {}, now: new Date(),
  }));
  for (let i = 0; i < merchants.length; i += concurrency) await Promise.all(merchants.slice(i, i + concurrency).map(fundOne));
}
