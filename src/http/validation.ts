// Request validation as docs/api-reference.md#request-rules wants it, which is not Fastify's default (docs/architecture.md#stack-pitfalls):
// unknown fields are errors (never stripped), body types are never coerced, every failing field is
// reported, and Ajv's errors become the contract's dotted field paths and field codes.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { parseAmount } from '../money.ts';
import { ApiError, type FieldError, type FieldErrorCode } from './errors.ts';

// ajv-formats is CommonJS; under NodeNext its default export arrives wrapped.
const addFormats = addFormatsModule.default;

/** Keywords that only document a schema (OpenAPI), which Ajv must accept without validating. */
const ANNOTATION_KEYWORDS = ['example', 'x-format-hint', 'x-error-code'];

function newAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    removeAdditional: false,
    coerceTypes,
    useDefaults: true,
    strict: false,
    verbose: true, // errors carry their schema, so a pattern error can say what the format is (x-format-hint)
  });
  addFormats(ajv);
  for (const keyword of ANNOTATION_KEYWORDS) ajv.addKeyword(keyword);
  addMoneyKeyword(ajv);
  return ajv;
}

// Bodies are JSON and keep their types; query strings and path parameters are text by nature and are
// read as the declared type (a query `page=2` is the integer 2, `page=two` a 422).
const bodyAjv = newAjv(false);
const textAjv = newAjv(true);

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : textAjv;
  return ajv.compile(schema) as ValidateFunction;
};

/**
 * `x-money: { min, max }` (centavos) validates an amount given as a JSON number or a numeric string with
 * the rules of money.ts, reporting the contract's field codes (`too_many_decimals`, `too_small`…).
 */
function addMoneyKeyword(ajv: Ajv): void {
  ajv.addKeyword({
    keyword: 'x-money',
    schemaType: 'object',
    errors: true,
    validate: function validateMoney(bounds: { min: number; max: number }, data: unknown) {
      const parsed = parseAmount(data, bounds);
      if (parsed.ok) return true;
      (validateMoney as unknown as { errors: Partial<ErrorObject>[] }).errors = [
        { keyword: 'x-money', message: moneyMessage(parsed.problem, bounds), params: { code: parsed.problem } },
      ];
      return false;
    },
  });
}

function moneyMessage(problem: string, bounds: { min: number; max: number }): string {
  const range = `from ${(bounds.min / 100).toFixed(2)} to ${(bounds.max / 100).toFixed(2)}`;
  switch (problem) {
    case 'too_many_decimals':
      return 'must have at most two decimals';
    case 'too_small':
    case 'too_large':
      return `must be ${range}`;
    case 'invalid_type':
      return 'must be a number or a numeric string';
    default:
      return `must be an amount such as 10.50, ${range}`;
  }
}

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Parses a JSON body. An empty body reads as `{}`. Keys that could poison prototypes (`__proto__`,
 * `constructor`, `prototype`) are removed at any depth and returned, so the request answers 422
 * `unknown_field` for them before any code could merge them into another object.
 */
export function parseJsonBody(text: string): { body: unknown; forbiddenFields: string[] } {
  if (text.trim() === '') return { body: {}, forbiddenFields: [] };
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ApiError('MALFORMED_JSON');
  }
  const forbiddenFields: string[] = [];
  removeForbiddenKeys(body, [], forbiddenFields);
  return { body, forbiddenFields };
}

function removeForbiddenKeys(value: unknown, path: string[], found: string[]): void {
  if (typeof value !== 'object' || value === null) return;
  if (Array.isArray(value)) {
    value.forEach((item, index) => removeForbiddenKeys(item, [...path, String(index)], found));
    return;
  }
  for (const key of Object.keys(value)) {
    if (FORBIDDEN_KEYS.has(key)) {
      found.push([...path, key].join('.'));
      delete (value as Record<string, unknown>)[key];
    } else {
      removeForbiddenKeys((value as Record<string, unknown>)[key], [...path, key], found);
    }
  }
}

export function unknownFieldErrors(fields: string[]): FieldError[] {
  return fields.map((field) => ({ field, code: 'unknown_field', message: 'is not a field of this request' }));
}

/** Ajv's errors as the contract's field errors, one per failing field (the first problem of each field wins). */
export function fieldErrorsFromAjv(errors: ErrorObject[]): FieldError[] {
  const byField = new Map<string, FieldError>();
  for (const error of errors) {
    const fieldError = toFieldError(error);
    if (fieldError && !byField.has(fieldError.field)) byField.set(fieldError.field, fieldError);
  }
  return [...byField.values()];
}

function toFieldError(error: ErrorObject): FieldError | null {
  const path = error.instancePath.split('/').filter(Boolean).map(unescapePointer);
  // An error of a key itself (propertyNames: a metadata key too long) names the key, like a value's error would.
  if (error.propertyName !== undefined && error.keyword === 'maxLength') {
    return { field: [...path, error.propertyName].join('.'), code: 'too_long', message: `keys must be at most ${(error.params as { limit: number }).limit} characters` };
  }
  const at = (extra?: string) => [...path, ...(extra === undefined ? [] : [extra])].join('.') || '(body)';
  const params = error.params as Record<string, unknown>;
  const field = (code: FieldErrorCode, message: string, extra?: string): FieldError => ({ field: at(extra), code, message });
  switch (error.keyword) {
    case 'required':
      return field('required', 'is required', String(params.missingProperty));
    case 'additionalProperties':
      return field('unknown_field', 'is not a field of this request', String(params.additionalProperty));
    case 'type':
      return field('invalid_type', `must be ${describeType(params.type)}`);
    case 'maxLength':
      return field('too_long', `must be at most ${params.limit} characters`);
    case 'minLength':
      return params.limit === 1 ? field('required', 'must not be empty') : field('too_small', `must be at least ${params.limit} characters`);
    case 'maxItems':
    case 'maxProperties':
      return field('too_large', `must have at most ${params.limit} entries`);
    case 'minItems':
    case 'minProperties':
      return field('too_small', `must have at least ${params.limit} entries`);
    case 'minimum':
    case 'exclusiveMinimum':
      return field('too_small', `must be ${error.keyword === 'minimum' ? 'at least' : 'greater than'} ${params.limit}`);
    case 'maximum':
    case 'exclusiveMaximum':
      return field('too_large', `must be ${error.keyword === 'maximum' ? 'at most' : 'less than'} ${params.limit}`);
    case 'multipleOf':
      return field('too_many_decimals', 'has too many decimals');
    case 'pattern':
    case 'format': {
      const hint = (error.parentSchema as { 'x-format-hint'?: string } | undefined)?.['x-format-hint'];
      return field('invalid_format', hint ?? (error.keyword === 'format' ? `must be a valid ${params.format}` : 'has an invalid format'));
    }
    case 'enum':
      return field(errorCodeOf(error) ?? 'invalid_value', `must be one of: ${(params.allowedValues as unknown[]).map(String).join(', ')}`);
    case 'const':
      return field('invalid_value', `must be ${JSON.stringify(params.allowedValue)}`);
    case 'x-money':
      return field(params.code as FieldErrorCode, error.message ?? 'is not a valid amount');
    case 'propertyNames':
      return null; // reported by the nested error on the property name itself
    case 'anyOf':
    case 'oneOf':
      return field('invalid_value', 'does not match any allowed form');
    default:
      return field('invalid_value', error.message ?? 'is invalid');
  }
}

/** A schema may name the field code its enum failure answers with (`x-error-code: unsupported_currency`). */
function errorCodeOf(error: ErrorObject): FieldErrorCode | undefined {
  return (error.parentSchema as { 'x-error-code'?: FieldErrorCode } | undefined)?.['x-error-code'];
}

function describeType(type: unknown): string {
  const types = Array.isArray(type) ? type : String(type).split(',');
  const names: Record<string, string> = {
    string: 'a string', integer: 'an integer', number: 'a number', boolean: 'a boolean (true or false)',
    object: 'an object', array: 'an array', null: 'null',
  };
  return types.map((t) => names[t] ?? t).join(' or ');
}

function unescapePointer(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}
