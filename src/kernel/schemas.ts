// Schemas shared by every capability: the error body, pagination, and helpers that keep route
// declarations short. TypeBox schemas are validation, OpenAPI and TypeScript types at once.
import { Type, type TSchema } from '@sinclair/typebox';
import { ERROR_CATALOGUE, FIELD_ERROR_CODES, type FieldErrorCode } from './errors.ts';

export const FieldErrorSchema = Type.Object({
  field: Type.String({ description: 'Dotted path of the failing field, e.g. destination.account_number' }),
  code: Type.Unsafe<FieldErrorCode>({ type: 'string', enum: [...FIELD_ERROR_CODES], description: 'Why the field failed (docs/api-reference.md#field-codes)' }),
  message: Type.String(),
});

export const ErrorSchema = Type.Object(
  {
    type: Type.String(),
    code: Type.Unsafe<string>({ type: 'string', enum: Object.keys(ERROR_CATALOGUE) }),
    message: Type.String(),
    errors: Type.Optional(Type.Array(FieldErrorSchema)),
  },
  { $id: 'Error', description: 'Every error: type, code and message; a 422 also lists each failing field.' },
);

/** `response` entries for the error statuses a route can answer. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  return Object.fromEntries(statuses.map((status) => [status, Type.Ref(ErrorSchema)]));
}

/** Statuses every authenticated API route can answer, before its own. */
export const AUTHENTICATED_ERRORS = [401, 403, 429, 500, 503] as const;

/** Statuses every operator route (/admin/v1) can answer; 429: wrong tokens lock a client network out (src/http/token-lockout.ts). */
export const OPERATOR_ERRORS = [401, 429, 500, 503] as const;

/** An object that rejects unknown fields (422 `unknown_field`). */
export const StrictObject: typeof Type.Object = ((properties: Parameters<typeof Type.Object>[0], options?: object) =>
  Type.Object(properties, { additionalProperties: false, ...options })) as typeof Type.Object;

export const PaginationMetaSchema = Type.Object({
  current_page: Type.Integer({ minimum: 1 }),
  last_page: Type.Integer({ minimum: 1 }),
  per_page: Type.Integer({ minimum: 1 }),
  total: Type.Integer({ minimum: 0 }),
});

/**
 * A positive integer id (a path parameter, a business_code, `before_id`): 1 to 2^53 − 1, the largest
 * integer JSON carries exactly. In a path, anything else names no resource (404).
 */
export const PositiveId = (options: { description?: string; example?: number } = {}) =>
  Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, ...options });

/** A merchant's business_code in an answer, with a realistic example (/docs would show 0 otherwise). */
export const BusinessCode = (options: { description?: string } = {}) => Type.Integer({ example: 1001, ...options });

/** An email address as the service accepts one (the onboarding form's contact, a console user's sign-in). */
export const EmailAddress = (options: { description?: string } = {}) =>
  Type.String({ maxLength: 254, pattern: '^[^\\s@]+@[^\\s@][^\\s@.]*\\.[^\\s@]*[^\\s@]$', 'x-format-hint': 'must be an email address', ...options });

export const Timestamp = (description?: string) =>
  Type.String({ format: 'date-time', description: description ?? 'ISO 8601 UTC', example: '2026-11-22T22:41:39.000Z' });

/** A string from a fixed list, as a plain JSON Schema `enum` (one clear 422 `invalid_value`, unlike a union of literals). */
export function StringEnum<const T extends readonly string[]>(values: T, options: { description?: string; default?: T[number] } = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/**
 * An amount in BOB: a JSON number or numeric string with at most two decimals, from `minCentavos` to
 * `maxCentavos` inclusive (the `x-money` keyword of validation.ts; parse it with money.ts parseAmount).
 */
export function MoneyAmount(minCentavos: number, maxCentavos: number, options: { description?: string; example?: number } = {}) {
  return Type.Unsafe<number | string>({
    type: ['number', 'string'],
    'x-money': { min: minCentavos, max: maxCentavos },
    description: options.description ?? `Amount in BOB, ${(minCentavos / 100).toFixed(2)} to ${(maxCentavos / 100).toFixed(2)}, at most two decimals`,
    example: options.example ?? 150.5,
  });
}

/** `currency`: only BOB; anything else is 422 `unsupported_currency`. */
export const CurrencySchema = Type.Unsafe<'BOB'>({
  type: 'string',
  enum: ['BOB'],
  'x-error-code': 'unsupported_currency',
  description: 'Only BOB',
});
