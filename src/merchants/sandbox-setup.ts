// First run in sandbox mode: an empty database gets a sandbox partner and a sandbox merchant (ACH on),
// so a newcomer can call every endpoint right after `npm start`.
import type { AppContext } from '../context.ts';
import * as merchants from './service.ts';

export interface SandboxCredentials {
  partnerId: number;
  masterKey: string;
  businessCode: number;
  apiKey: string;
}

/** Creates the sandbox partner and merchant when the database holds neither yet; null otherwise. */
export async function createSandboxAccountsIfEmpty({ config, db, clock }: AppContext): Promise<SandboxCredentials | null> {
  if (config.mode !== 'sandbox') return null;
  return db.transaction(async (tx) => {
    // Serializes two processes doing their first start on one PostgreSQL database.
    await tx.query("select pg_advisory_xact_lock(hashtextextended('mps:sandbox-setup', 0))");
    if (!(await merchants.isEmpty(tx))) return null;
    const now = clock.now();
    const partner = await merchants.createPartnerIn(tx, 'Sandbox Partner', config.mode, now);
    const merchant = await merchants.createMerchantIn(tx, {
      name: 'Sandbox Merchant',
      achEnabled: true,
      partnerId: partner.partner.id,
      plan: config.defaultPricePlan,
    }, config.mode, now);
    return {
      partnerId: partner.partner.id,
      masterKey: partner.masterKey,
      businessCode: merchant.merchant.business_code,
      apiKey: merchant.apiKey,
    };
  });
}
