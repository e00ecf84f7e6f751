// The registration form (docs/api-reference.md#hosted-onboarding-flow): the values kept for re-display, the
// check — the compiled registrationFormSchema, the same field schemas as the API's — and a clear message
// for each failing field. The payout bank must be one of the transfers module's banks.
import type { TObject } from '@sinclair/typebox';
import type { BankConfig } from '../../config.ts';
import type { FieldError } from '../../kernel/errors.ts';
import { formErrorsOf, type FormErrors as ErrorsOfForm } from '../../kernel/forms.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import type { MessageKey } from '../../kernel/i18n/messages-en.ts';
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

/** The free-text fields whose message says the longest value allowed (the schema's maxLength) when too long. */
const LENGTH_CAPPED = new Set<FormField>(['legal_name', 'trade_name', 'city', 'account_holder']);

/** A field's message in the visitor's language: `onboarding.error.<field>`, or `….too_long` for text too long. */
function messageOf(locale: Locale, schema: TObject, field: FormField, error: FieldError): string {
  const max = (schema.properties[field] as { maxLength?: number } | undefined)?.maxLength;
  if (LENGTH_CAPPED.has(field) && max !== undefined && error.code === 'too_long') {
    return locale.t(`onboarding.error.${field}.too_long` as MessageKey, { max });
  }
  return locale.t(`onboarding.error.${field}`);
}

/** The check of the form for a list of banks, compiled once. */
export function registrationCheck(banks: readonly BankConfig[]) {
  const schema = registrationFormSchema(banks);
  const check = compileBodyCheck(schema);
  return (values: FormValues, locale: Locale): { registration: Registration } | { errors: FormErrors } => {
    const { mcc, bank_code: bankCode, ...rest } = values;
    // The bank code is a number where it reads as one; anything else stays text and fails as a type.
    const submitted = {
      ...rest,
      ...(mcc === '' ? {} : { mcc }),
      bank_code: /^[0-9]{1,9}$/.test(bankCode) ? Number(bankCode) : bankCode,
    };
    const errors = formErrorsOf(check(submitted), values, locale, (field, error) => messageOf(locale, schema, field, error));
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
