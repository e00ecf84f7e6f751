// The console's forms (docs/console.md), checked on the server: the values kept for re-display (never a
// password), and a message in the visitor's language for each failing field. An email is checked by the
// same schema as the operator API's (kernel/schemas.ts EmailAddress); a password by its length only
// (users/passwords.ts), counted in characters as a person counts them.
import { Type } from '@sinclair/typebox';
import { formErrorsOf, type FormErrors } from '../../kernel/forms.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import { EmailAddress } from '../../kernel/schemas.ts';
import { compileBodyCheck, isStorableText } from '../../kernel/validation.ts';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../../users/passwords.ts';

export type { FormErrors } from '../../kernel/forms.ts';

const checkEmailField = compileBodyCheck(Type.Object({ email: EmailAddress() }));

/** A posted field as text ('' when missing or repeated oddly). */
function field(body: unknown, name: string): string {
  const value = (body as Record<string, unknown> | null | undefined)?.[name];
  return typeof value === 'string' ? value : '';
}

function emailErrors(email: string, locale: Locale): FormErrors<'email'> {
  return formErrorsOf(checkEmailField({ email }), { email }, locale, () => locale.t('console.error.email'));
}

/** A password's message, or undefined when it may be set. */
function newPasswordError(password: string, locale: Locale): string | undefined {
  if (!isStorableText(password)) return locale.t('common.unstorable');
  const length = [...password].length;
  if (length < MIN_PASSWORD_LENGTH) return locale.t('console.error.password_short', { min: MIN_PASSWORD_LENGTH });
  if (length > MAX_PASSWORD_LENGTH) return locale.t('console.error.password_long', { max: MAX_PASSWORD_LENGTH });
  return undefined;
}

export type SignInField = 'email' | 'password';

/** The sign-in form: an email and a password not empty. The email is kept for the form shown again. */
export function readSignIn(body: unknown, locale: Locale): { email: string } & ({ password: string } | { errors: FormErrors<SignInField> }) {
  const email = field(body, 'email').trim();
  const password = field(body, 'password');
  const errors: FormErrors<SignInField> = emailErrors(email, locale);
  if (password === '') errors.password = locale.t('console.error.password_required');
  else if (!isStorableText(password) || [...password].length > MAX_PASSWORD_LENGTH) errors.password = locale.t('console.sign_in.refused');
  return Object.keys(errors).length > 0 ? { email, errors } : { email, password };
}

export type NewPasswordField = 'password' | 'password_confirmation';

/** The invitation's form: a new password, typed twice. */
export function readNewPassword(body: unknown, locale: Locale): { password: string } | { errors: FormErrors<NewPasswordField> } {
  const password = field(body, 'password');
  const confirmation = field(body, 'password_confirmation');
  const problem = newPasswordError(password, locale);
  if (problem) return { errors: { password: problem } };
  if (confirmation !== password) return { errors: { password_confirmation: locale.t('console.error.password_mismatch') } };
  return { password };
}

/** The owner's invitation of a cashier: an email. */
export function readInvite(body: unknown, locale: Locale): { email: string } & ({ ok: true } | { errors: FormErrors<'email'> }) {
  const email = field(body, 'email').trim();
  const errors = emailErrors(email, locale);
  return Object.keys(errors).length > 0 ? { email, errors } : { email, ok: true };
}
