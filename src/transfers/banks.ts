// The banks a transfer may be sent to (docs/api-reference.md#banks): BANKS_FILE when configured, else this shipped list.
import type { BankConfig, Config } from '../config.ts';

/**
 * Bolivian banks regulated by ASFI that take interbank (ACH) credits, as of 2026. Banks that no longer
 * operate (Banco Fassil, liquidated in 2023; Banco PYME Los Andes ProCredit, absorbed by Banco Mercantil
 * Santa Cruz in 2016) are left out; an operator can ship another list with BANKS_FILE.
 *
 * The codes are this service's own (four digits from 1001), NOT the institutions' ASFI codes: no
 * authoritative public list of those codes (ASFI's, the ACH operator ACCL's, or a bank's API documentation)
 * could be found to source them from (docs/transfers.md#banks says what was searched), and a code is not
 * invented. A bank rail sends `bank_code` to the bank as the ASFI code (Banco Económico's `bankCode`, and its
 * `senderBankCode` names payers' banks), so with RAIL=baneco these codes would name the wrong institutions:
 * such a service needs a BANKS_FILE of ASFI codes confirmed by the bank (docs/rails.md, certification).
 */
export const DEFAULT_BANKS: readonly BankConfig[] = [
  { bankCode: 1001, name: 'Banco Nacional de Bolivia' },
  { bankCode: 1002, name: 'Banco Mercantil Santa Cruz' },
  { bankCode: 1003, name: 'Banco Bisa' },
  { bankCode: 1004, name: 'Banco de Crédito de Bolivia' },
  { bankCode: 1005, name: 'Banco Económico' },
  { bankCode: 1006, name: 'Banco Ganadero' },
  { bankCode: 1007, name: 'Banco Unión' },
  { bankCode: 1008, name: 'Banco Solidario (BancoSol)' },
  { bankCode: 1009, name: 'Banco FIE' },
  { bankCode: 1010, name: 'Banco Fortaleza' },
  { bankCode: 1011, name: 'Banco Prodem' },
  { bankCode: 1012, name: 'Banco PYME Ecofuturo' },
  { bankCode: 1013, name: 'Banco PYME de la Comunidad' },
  { bankCode: 1014, name: 'Banco de la Nación Argentina (sucursal Bolivia)' },
];

/**
 * Whether DEFAULT_BANKS holds the institutions' ASFI codes. False until a sourced list replaces the codes
 * above: whatever starts a bank rail checks it, so the shipped list never reaches a bank.
 */
export const DEFAULT_BANKS_ARE_ASFI_CODES = false;

/** The configured bank list, in the order given. */
export function configuredBanks(config: Config): readonly BankConfig[] {
  return config.banks ?? DEFAULT_BANKS;
}

/** A bank's name by its code, from `banks` (undefined for a code not in the list). */
export function bankNameLookup(banks: readonly BankConfig[]): (bankCode: number) => string | undefined {
  const names = new Map(banks.map((bank) => [bank.bankCode, bank.name]));
  return (bankCode) => names.get(bankCode);
}

/** The wire form of GET /api/v2/banks. */
export function toBankList(banks: readonly BankConfig[]) {
  return { data: banks.map((bank) => ({ bank_code: bank.bankCode, name: bank.name })) };
}
