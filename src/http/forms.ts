// Form posts of the hosted pages (sandbox pay form, onboarding flow): the one parser of
// application/x-www-form-urlencoded bodies, and the rule every form field shares with the API's strings.
import type { FastifyInstance } from 'fastify';

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

/**
 * The form's counterpart of the API's string rule (src/http/validation.ts, hardenSchema): a field holding
 * U+0000, which the database cannot store, is the field's error, never a failed insert.
 */
export function holdsNul(value: string): boolean {
  return value.includes('\u0000');
}

export const NUL_FIELD_MESSAGE = 'Remove the invisible control character (U+0000) from this field.';
