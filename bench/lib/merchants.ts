// Merchants the load of a benchmark comes from: created through the operator API of the service under
// test, and funded straight through the ledger (a credit with its journal entry, as a payment would be).
import type { Database } from '../../src/db/database.ts';
import * as ledger from '../../src/ledger/service.ts';
import { centavos } from '../../src/money.ts';
import type { BenchMerchant } from './requests.ts';

/** `count` merchants with ACH pay-outs enabled (POST /admin/v1/merchants), one after another. */
export async function createMerchants(serviceUrl: string, adminToken: string, count: number, namePrefix = 'Bench'): Promise<BenchMerchant[]> {
  const merchants: BenchMerchant[] = [];
  for (let i = 0; i < count; i++) {
    const response = await fetch(`${serviceUrl}/admin/v1/merchants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `${namePrefix} ${i}`, ach_enabled: true }),
    });
    if (!response.ok) throw new Error(`POST /admin/v1/merchants: ${response.status} ${await response.text()}`);
    const body = (await response.json()) as { business_code: number; api_key: string };
    merchants.push({ businessCode: body.business_code, apiKey: body.api_key });
  }
  return merchants;
}

/** Credits each merchant `amountCentavos`, one transaction each. */
export async function fundMerchants(db: Database, merchants: readonly BenchMerchant[], amountCentavos = 100_000_000): Promise<void> {
  for (const merchant of merchants) {
    await db.transaction((tx) => ledger.credit(tx, {
      businessCode: merchant.businessCode, amountCentavos: centavos(amountCentavos), reference: 'bench funding', snapshot: {}, now: new Date(),
    }));
  }
}
