// The owner's transfer form (docs/console.md#transfers), checked on the server by the API's own schema of a
// transfer (transfers/schemas.ts createTransferBodySchema with the configured banks): the same amount bounds
// (0.10 to 20,000.00, two decimals at most), bank list, account number, holder and reference rules. The form
// only chooses the words an owner reads.
import { randomUUID } from 'node:crypto';
import type { BankConfig } from '../../config.ts';
import { formErrorsOf, type FormErrors } from '../../kernel/forms.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import { compileBodyCheck } from '../../kernel/validation.ts';
import { isUuidV4 } from '../../idempotency/service.ts';
import { validatedCentavos, type Centavos } from '../../money.ts';
import { createTransferBodySchema, MAX_TRANSFER_CENTAVOS, MIN_TRANSFER_CENTAVOS, type CreateTransferBody } from '../../transfers/schemas.ts';

export type TransferField = 'amount' | 'bank_code' | 'account_number' | 'account_titular' | 'reference';

export interface TransferFormValues {
  amount: string;
  bank_code: string;
  account_number: string;
  account_titular: string;
  reference: string;
  /** The form's idempotency key: one per form, so a second submit of its confirmation makes no second transfer. */
  key: string;
}

/** A fresh form: empty fields and a new key. */
export function newTransferForm(): TransferFormValues {
  return { amount: '', bank_code: '', account_number: '', account_titular: '', reference: '', key: randomUUID() };
}

/** A posted field as text ('' when missing). */
function field(body: unknown, name: string): string {
  const value = (body as Record<string, unknown> | null | undefined)?.[name];
  return typeof value === 'string' ? value : '';
}

/** The API field each form field is checked as. */
const API_FIELDS: Record<string, TransferField> = {
  amount: 'amount',
  'destination.bank_code': 'bank_code',
  'destination.account_number': 'account_number',
  'destination.account_titular': 'account_titular',
  reference: 'reference',
};

export interface CheckedTransfer {
  body: CreateTransferBody;
  amountCentavos: Centavos;
  key: string;
}

/**
 * The transfer as typed, checked by the API's schema. The amount may be written as the owner's language
 * writes it (`1.234,50` in Spanish), read as the pay page reads amounts.
 */
export function readTransfer(body: unknown, locale: Locale, banks: readonly BankConfig[], businessCode: number):
  { values: TransferFormValues } & ({ transfer: CheckedTransfer } | { errors: FormErrors<TransferField> }) {
  const values: TransferFormValues = {
    amount: field(body, 'amount').trim(),
    bank_code: field(body, 'bank_code').trim(),
    account_number: field(body, 'account_number').trim(),
    account_titular: field(body, 'account_titular').trim(),
    reference: field(body, 'reference').trim(),
    key: field(body, 'idempotency_key').trim().toLowerCase(),
  };
  const amount = /^\d+(\.\d+)?$/.test(values.amount) ? values.amount : locale.readAmount(values.amount);
  const bankCode = /^[0-9]{1,9}$/.test(values.bank_code) ? Number(values.bank_code) : values.bank_code;
  const request = {
    business_code: businessCode,
    amount,
    currency: 'BOB',
    ...(values.reference === '' ? {} : { reference: values.reference }),
    destination: { type: 'bank_account', bank_code: bankCode, account_number: values.account_number, account_titular: values.account_titular },
  };
  const problems = checkerFor(banks)(request).flatMap((problem) => {
    const name = API_FIELDS[problem.field];
    return name ? [{ ...problem, field: name }] : [];
  });
  const errors = formErrorsOf(problems, values as unknown as Record<TransferField, string>, locale, (name) => {
    switch (name) {
      case 'amount': return locale.t('console.transfers.error.amount', { min: locale.money(MIN_TRANSFER_CENTAVOS), max: locale.money(MAX_TRANSFER_CENTAVOS) });
      case 'bank_code': return locale.t('console.transfers.error.bank');
      case 'account_number': return locale.t('console.transfers.error.account_number');
      case 'account_titular': return locale.t('console.transfers.error.account_titular');
      case 'reference': return locale.t('console.transfers.error.reference', { max: 50 });
    }
  });
  // A form without its key (or with one altered) is not sent blindly: the form comes back with a new key.
  if (!isUuidV4(values.key)) errors._form = locale.t('console.transfers.error.form_key');
  if (Object.keys(errors).length > 0) return { values, errors };
  const checked = request as unknown as CreateTransferBody;
  return { values, transfer: { body: checked, amountCentavos: validatedCentavos(checked.amount, { min: MIN_TRANSFER_CENTAVOS, max: MAX_TRANSFER_CENTAVOS }), key: values.key } };
}

const checkers = new WeakMap<readonly BankConfig[], (data: unknown) => ReturnType<ReturnType<typeof compileBodyCheck>>>();

function checkerFor(banks: readonly BankConfig[]) {
  let check = checkers.get(banks);
  if (!check) {
    check = compileBodyCheck(createTransferBodySchema(banks));
    checkers.set(banks, check);
  }
  return check;
}
