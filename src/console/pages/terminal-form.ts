// The terminal's charge form (docs/console.md#pos-terminal), checked on the server by the API's own schema of a
// QR (qr/schemas.ts CreateQrBody): the same amount bounds (0.10 to 100000.00, two decimals at most) and the
// same description rule. The form only chooses the words a cashier reads.
import { randomUUID } from 'node:crypto';
import { formErrorsOf, type FormErrors } from '../../kernel/forms.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import { compileBodyCheck } from '../../kernel/validation.ts';
import { isUuidV4 } from '../../idempotency/service.ts';
import { QR_AMOUNT_BOUNDS, CreateQrBody } from '../../qr/schemas.ts';
import { chargeBody, type Charge } from '../terminal.ts';

export type ChargeField = 'amount' | 'description';

const checkCreateBody = compileBodyCheck(CreateQrBody);

/** A fresh idempotency key for a keypad page: one per form, so a second submit of it makes no second QR. */
export function newChargeKey(): string {
  return randomUUID();
}

/** A posted field as text ('' when missing). */
function field(body: unknown, name: string): string {
  const value = (body as Record<string, unknown> | null | undefined)?.[name];
  return typeof value === 'string' ? value : '';
}

export interface ChargeFormValues {
  amount: string;
  description: string;
  key: string;
}

/**
 * The charge as typed: the number input sends `12.5` whatever the language (the keypad fills it so); a
 * cashier typing without JavaScript in Spanish may write `12,50`, read as the pay page reads amounts.
 */
export function readCharge(body: unknown, locale: Locale, businessCode: number): { values: ChargeFormValues } & ({ charge: Charge } | { errors: FormErrors<ChargeField> }) {
  const values = { amount: field(body, 'amount').trim(), description: field(body, 'description').trim(), key: field(body, 'idempotency_key').trim().toLowerCase() };
  const amount = /^\d+(\.\d+)?$/.test(values.amount) ? values.amount : locale.readAmount(values.amount);
  const description = values.description === '' ? undefined : values.description;
  const problems = checkCreateBody(chargeBody(businessCode, amount, description))
    .filter((problem) => problem.field === 'amount' || problem.field === 'description');
  const errors = formErrorsOf(problems, values as Record<ChargeField, string>, locale, (name) => name === 'amount'
    ? locale.t('console.terminal.error.amount', { min: locale.money(QR_AMOUNT_BOUNDS.min), max: locale.money(QR_AMOUNT_BOUNDS.max) })
    : locale.t('console.terminal.error.description', { max: 140 }));
  // A form without its key (or with one altered) is not sent again blindly: the page comes back with a new key.
  if (!isUuidV4(values.key)) errors._form = locale.t('console.terminal.error.form_key');
  if (Object.keys(errors).length > 0) return { values, errors };
  return { values, charge: { amount, description, key: values.key } };
}
