// Server-side validation of the registration form (docs/api-reference.md#hosted-onboarding-flow): each field's rule and a clear message,
// the values kept for re-display. The payout bank must be one of the transfers module's banks.
import type { BankConfig } from '../../config.ts';
import { UNSTORABLE_TEXT_MESSAGE } from '../../kernel/forms.ts';
import { isStorableText } from '../../kernel/validation.ts';
import { DEFAULT_CITY } from '../../merchants/service.ts';
import type { Registration } from '../store.ts';

export const FORM_FIELDS = [
  'legal_name', 'trade_name', 'tax_id', 'email', 'phone', 'city', 'mcc', 'bank_code', 'account_number', 'account_holder',
] as const;
export type FormField = (typeof FORM_FIELDS)[number];

export type FormValues = Record<FormField, string>;
export type FormErrors = Partial<Record<FormField | '_form', string>>;

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

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function checkRegistration(values: FormValues, banks: readonly BankConfig[]): { registration: Registration } | { errors: FormErrors } {
  const errors: FormErrors = {};
  const text = (name: FormField, label: string, max: number) => {
    if (values[name] === '') errors[name] = `Enter the ${label}.`;
    else if (values[name].length > max) errors[name] = `The ${label} can have at most ${max} characters.`;
  };
  text('legal_name', 'legal name', 200);
  text('trade_name', 'trade name', 200);
  if (!/^[0-9]{5,15}$/.test(values.tax_id)) errors.tax_id = 'Enter the NIT with digits only (5 to 15 digits).';
  if (values.email.length > 254 || !EMAIL.test(values.email)) errors.email = 'Enter an email address such as ana@example.com.';
  const phoneDigits = values.phone.replace(/[^0-9]/g, '');
  if (!/^\+?[0-9 ()-]+$/.test(values.phone) || phoneDigits.length < 7 || phoneDigits.length > 15 || values.phone.length > 20) {
    errors.phone = 'Enter a phone number with 7 to 15 digits, such as +591 71234567.';
  }
  text('city', 'city', 100);
  if (values.mcc !== '' && !/^[0-9]{4}$/.test(values.mcc)) errors.mcc = 'The category code has 4 digits (for example 5812), or leave it empty.';
  const bankCode = /^[0-9]{1,9}$/.test(values.bank_code) ? Number(values.bank_code) : null;
  if (bankCode === null || !banks.some((bank) => bank.bankCode === bankCode)) errors.bank_code = 'Choose the bank of the payout account.';
  if (!/^[0-9-]{1,34}$/.test(values.account_number) || !/[0-9]/.test(values.account_number)) {
    errors.account_number = 'Enter the account number: digits and hyphens only, up to 34 characters.';
  }
  text('account_holder', 'account holder\'s name', 100);
  for (const name of FORM_FIELDS) if (!isStorableText(values[name])) errors[name] = UNSTORABLE_TEXT_MESSAGE;
  if (Object.keys(errors).length > 0) return { errors };
  return {
    registration: {
      legalName: values.legal_name,
      tradeName: values.trade_name,
      taxId: values.tax_id,
      email: values.email,
      phone: values.phone,
      city: values.city,
      mcc: values.mcc === '' ? null : values.mcc,
      payoutBankCode: bankCode!,
      payoutAccountNumber: values.account_number,
      payoutAccountHolder: values.account_holder,
    },
  };
}
