// Form posts of the hosted pages (sandbox pay form, onboarding flow): the one parser of
// application/x-www-form-urlencoded bodies, and how a form is checked. A form is checked by a TypeBox
// schema compiled like the API's (validation.ts compileBodyCheck), built from the same field schemas as
// the API where the API has the field; the form only chooses the words a person reads.
import type { FastifyInstance } from 'fastify';
import type { FieldError } from './errors.ts';
import type { Locale } from './i18n/locale.ts';
import { isStorableText } from './validation.ts';

/** Largest form body (a few short fields; far below the API's 64 KiB). */
export const FORM_BODY_LIMIT_BYTES = 8 * 1024;

/**
 * Makes `scope` read form posts and nothing else: a JSON body there is 415, like any type it does not
 * read. URLSearchParams never creates prototype keys, and the fields land in a null-prototype object.
 */
export function acceptFormPostsOnly(scope: FastifyInstance): void {
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT_BYTES }, (_request, text, done) => {
    const fields: Record<string, string> = Object.create(null);
    for (const [key, value] of new URLSearchParams(text as string)) fields[key] = value;
    done(null, fields);
  });
}

/** A form's messages by field; `_form` is a message about the whole form. */
export type FormErrors<Field extends string> = Partial<Record<Field | '_form', string>>;

/**
 * The form's message for each failing field of `errors` (the schema's verdict), in the visitor's
 * language: a value that is not storable text (the API's rule, validation.ts isStorableText) gets the one
 * message every form uses for it, any other failure the form's own words.
 */
export function formErrorsOf<Field extends string>(
  errors: readonly FieldError[],
  values: Readonly<Record<Field, string>>,
  locale: Locale,
  messageOf: (field: Field, error: FieldError) => string,
): FormErrors<Field> {
  const messages: FormErrors<Field> = {};
  for (const error of errors) {
    const field = error.field as Field;
    messages[field] = isStorableText(values[field] ?? '') ? messageOf(field, error) : locale.t('common.unstorable');
  }
  return messages;
}
