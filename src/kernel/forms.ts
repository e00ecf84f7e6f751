// Form posts of the hosted pages (sandbox pay form, onboarding flow): the one parser of
// application/x-www-form-urlencoded bodies, and the message of the text rule every form field shares with the API.
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

/** The form's counterpart of the API's text rule (validation.ts, isStorableText): such a field is its own error. */
export const UNSTORABLE_TEXT_MESSAGE = 'Remove the invisible control characters (such as U+0000) from this field.';
