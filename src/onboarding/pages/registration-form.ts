// The registration form (docs/api-reference.md#hosted-onboarding-flow): the values kept for re-display, the
// check — the compiled registrationFormSchema, the same field schemas as the API's — and a clear message
// for each failing field. The payout bank must be one of the transfers module's banks.
import type { BankConfig } from '../../config.ts';
import type { FieldError } from '../../kernel/errors.ts';
import { formErrorsOf, type FormErrors as ErrorsOfForm } from '../../kernel/forms.ts';
import { compileBodyCheck } from '../../kernel/validation.ts';
import { FullAccountNumber } from '../../masking.ts';
import { DEFAULT_CITY } from '../../merchants/service.ts';
import { registrationFormSchema } from '../schemas.ts';
import type { Registration } from '../store.ts';

export const FORM_FIELDS = [
  'legal_name', 'trade_name', 'tax_id', 'email', 'phone', 'city', 'mcc', 'bank_code', 'account_number', 'account_holder',
] as const;
export type FormField = (typeof FORM_FIELDS)[number];

export type FormValues = Record<FormField, string>;
export type FormErrors = ErrorsOfForm<FormField>;

export function emptyForm(): FormValues {
  const values = Object.fromEntries(FORM_FIELDS.map((name) => [name, ''])) as FormValues;
  values.city = DEFAULT_CITY;
  return values;
}

/** The submitted values, trimmed (inner whitespace of names collapsed); anything missing is ''. */
export function readForm(body: Record<string, unknown>): FormValues {
  const values = emptyForm();
  for (const name of FORM_FIELDS) {
    const raw = body[name];
    values[name] = typeof raw === 'string' ? raw.trim().replace(/\s+/g, ' ') : '';
  }
  return values;
}

/** A text field's message: empty, or too long. */
const text = (label: string, max: number) => (error: FieldError) =>
  (error.code === 'too_long' ? `The ${label} can have at most ${max} characters.` : `Enter the ${label}.`);

const MESSAGES: Record<FormField, (error: FieldError) => string> = {
  legal_name: text('legal name', 200),
  trade_name: text('trade name', 200),
  tax_id: () => 'Enter the NIT with digits only (5 to 15 digits).',
  email: () => 'Enter an email address such as ana@example.com.',
  phone: () => 'Enter a phone number with 7 to 15 digits, such as +591 71234567.',
  city: text('city', 100),
  mcc: () => 'The category code has 4 digits (for example 5812), or leave it empty.',
  bank_code: () => 'Choose the bank of the payout account.',
  account_number: () => 'Enter the account number: digits and hyphens only, up to 34 characters.',
  account_holder: text('account holder\'s name', 100),
};

/** The check of the form for a list of banks, compiled once. */
export function registrationCheck(banks: readonly BankConfig[]) {
  const check = compileBodyCheck(registrationFormSchema(banks));
  return (values: FormValues): { registration: Registration } | { errors: FormErrors } => {
    const { mcc, bank_code: bankCode, ...rest } = values;
    // The bank code is a number where it reads as one; anything else stays text and fails as a type.
    const submitted = {
      ...rest,
      ...(mcc === '' ? {} : { mcc }),
      bank_code: /^[0-9]{1,9}$/.test(bankCode) ? Number(bankCode) : bankCode,
    };
    const errors = formErrorsOf(check(submitted), values, (field, error) => MESSAGES[field](error));
    if (Object.keys(errors).length > 0) return { errors };
    return {
      registration: {
        legalName: values.legal_name,
        tradeName: values.trade_name,
        taxId: values.tax_id,
        email: values.email,
        phone: values.phone,
        city: values.city,
        mcc: mcc === '' ? null : mcc,
        payoutBankCode: Number(bankCode),
        payoutAccountNumber: new FullAccountNumber(values.account_number),
        payoutAccountHolder: values.account_holder,
      },
    };
  };
}
