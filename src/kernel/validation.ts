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

function newAjv(): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    removeAdditional: false,
    coerceTypes: false,
    useDefaults: true,
    strict: false,
    verbose: true, // errors carry their schema, so a pattern error can say what the format is (x-format-hint)
  });
  addFormats(ajv);
  for (const keyword of ANNOTATION_KEYWORDS) ajv.addKeyword(keyword);
  addMoneyKeyword(ajv);
  addStorableTextKeywords(ajv);
  return ajv;
}

// Bodies are JSON and keep their types. Query strings and path parameters are text by nature: they are
// read as the declared type by `readTextAsDeclared` with the service's one integer rule (canonical
// decimal), never by Ajv's coercion, which takes `1.0`, `1e2`, `0x1`, ` 1` and `+1` for integers.
const ajv = newAjv();

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  const validate = ajv.compile(hardenSchema(schema) as object) as ValidateFunction;
  if (httpPart === 'body') return validate;
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const validateText = (data: unknown) => {
    readTextAsDeclared(data, properties);
    const valid = validate(data);
    validateText.errors = validate.errors;
    return valid;
  };
  validateText.errors = null as ValidateFunction['errors'];
  return validateText;
};

/** Canonical decimal: no sign, exponent, fraction, hex, spaces or leading zero. */
const CANONICAL_INTEGER = /^(0|[1-9][0-9]*)$/;

/**
 * Turns the text of each query or path value into its declared type, in place: an integer in canonical
 * decimal becomes a number (one too large for a safe integer becomes a number above every schema's
 * maximum), `true`/`false` a boolean. Anything else stays text and fails its schema (422 `invalid_type`).
 */
function readTextAsDeclared(data: unknown, properties: Record<string, { type?: unknown }>): void {
  if (typeof data !== 'object' || data === null) return;
  const values = data as Record<string, unknown>;
  for (const [name, property] of Object.entries(properties)) {
    const text = values[name];
    if (typeof text !== 'string') continue;
    const types = Array.isArray(property.type) ? property.type : [property.type];
    if (types.includes('integer') && CANONICAL_INTEGER.test(text)) {
      values[name] = text.length > 16 ? Number.MAX_VALUE : Number(text);
    } else if (types.includes('boolean') && (text === 'true' || text === 'false')) {
      values[name] = text === 'true';
    }
  }
}

/** Largest integer any request may carry: ids are bigint in the database and must stay exact in JSON. */
export const MAX_REQUEST_INTEGER = Number.MAX_SAFE_INTEGER;

/**
 * The rules every schema gets, so no route can forget them: a string (value or object key) is text the
 * database stores exactly (isStorableText: 422 `invalid_value` instead of a failed insert), and an integer
 * never exceeds 2^53 − 1 (beyond it JSON numbers lose digits and bigint casts fail). Applied to a copy;
 * the route's own schema, which OpenAPI shows, is left as written.
 */
export function hardenSchema(schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return schema;
  const source = schema as Record<string, unknown>;
  // A pattern lets keys it does not match (a line break escapes `^(.*)$`) past every rule of the value.
  if (source.patternProperties) throw new Error('request schemas describe open objects with additionalProperties, not patternProperties (Type.Record)');
  // Under `not` or `if` an added rule would flip its meaning: request schemas do not use them.
  if (source.not !== undefined || source.if !== undefined) throw new Error('request schemas use no not/if: hardenSchema could not apply its rules there');
  const copy: Record<string, unknown> = { ...source };
  // Only where schemas sit: never into enum, const, default or example values.
  for (const keyword of SINGLE_SUBSCHEMA) if (keyword in copy) copy[keyword] = hardenSchema(copy[keyword]);
  for (const keyword of SUBSCHEMA_LISTS) if (Array.isArray(copy[keyword])) copy[keyword] = (copy[keyword] as unknown[]).map(hardenSchema);
  if (typeof copy.properties === 'object' && copy.properties !== null) {
    copy.properties = Object.fromEntries(Object.entries(copy.properties).map(([name, property]) => [name, hardenSchema(property)]));
  }
  const types = Array.isArray(copy.type) ? copy.type : [copy.type];
  if (types.includes('string')) copy['x-storable-text'] = true;
  // A pattern's maxLength bounds the text it reads. Where the pattern fixes the length itself (`^[0-9]{4}$`),
  // the schema's maxLength is looser (64), so that a wrong value still reads `invalid_format`.
  if (typeof copy.pattern === 'string') {
    if (typeof copy.maxLength !== 'number') throw new Error(`a request schema's pattern ${copy.pattern} needs a maxLength: no pattern runs on unbounded text`);
    REQUEST_PATTERNS.add(copy.pattern);
  }
  gateBehindLimits(copy);
  if (types.includes('integer')) {
    if (typeof copy.maximum !== 'number' || copy.maximum > MAX_REQUEST_INTEGER) copy.maximum = MAX_REQUEST_INTEGER;
    if (typeof copy.minimum !== 'number' || copy.minimum < -MAX_REQUEST_INTEGER) copy.minimum = -MAX_REQUEST_INTEGER;
  }
  // Keys get their own keyword: Ajv does not say which key a custom keyword refused, its error's data does.
  if (typeof copy.propertyNames === 'object' && copy.propertyNames !== null) {
    copy.propertyNames = { ...(copy.propertyNames as object), 'x-storable-key': true };
  } else if (copy.type === 'object' && copy.additionalProperties !== false) {
    copy.propertyNames = { 'x-storable-key': true };
  }
  return copy;
}

/**
 * What runs per character, per item or per key — a pattern, the items' schemas, the properties' schemas —
 * runs only once the value is within its size limit (`maxLength`, `maxItems`, `maxProperties`); an
 * oversized value gets its one size error and nothing else. Ajv's `allErrors` runs every keyword of a
 * schema even after one failed: a 60,000-digit account number went through its pattern, and an array of
 * 30,000 wrong event types answered one error per item (a 5.9 MB 422). Standard JSON Schema does it: the
 * limits move under `if`, and what they guard under `then`, which Ajv evaluates only when `if` holds.
 */
function gateBehindLimits(schema: Record<string, unknown>): void {
  const gates: Array<[limit: string, guarded: readonly string[]]> = [
    ['maxLength', ['pattern', 'format', 'x-format-hint']],
    ['maxItems', ['items', 'prefixItems', 'contains', 'uniqueItems']],
    ['maxProperties', ['properties', 'additionalProperties', 'propertyNames', 'dependentSchemas']],
  ];
  const limits: Record<string, unknown> = {};
  const guarded: Record<string, unknown> = {};
  for (const [limit, keywords] of gates) {
    if (typeof schema[limit] !== 'number') continue;
    for (const keyword of keywords) {
      if (!(keyword in schema)) continue;
      guarded[keyword] = schema[keyword];
      delete schema[keyword];
    }
    limits[limit] = schema[limit];
  }
  // The hint goes along with the pattern it explains (a pattern error reads it from its parent schema).
  if (Object.keys(guarded).some((keyword) => keyword !== 'x-format-hint')) {
    schema.if = limits;
    schema.then = guarded;
  } else {
    Object.assign(schema, guarded);
  }
}

/** Every pattern a request schema holds, as compiled (test/http/redos.test.ts runs each through a ReDoS checker). */
const REQUEST_PATTERNS = new Set<string>();

export function requestPatterns(): ReadonlySet<string> {
  return REQUEST_PATTERNS;
}

/** Keywords whose value is one subschema, and those whose value is a list of them. */
const SINGLE_SUBSCHEMA = ['items', 'additionalProperties', 'propertyNames', 'contains'] as const;
const SUBSCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const;

/**
 * Text PostgreSQL can store exactly: no U+0000 (refused by text columns) and no unpaired surrogate (JSON
 * lets `"\ud800"` through; jsonb refuses it, text columns would store U+FFFD and answer another string
 * than the one sent).
 */
export function isStorableText(text: string): boolean {
  return !text.includes('\u0000') && text.isWellFormed();
}

const STORABLE_TEXT_MESSAGE = 'must be Unicode text without U+0000 or an unpaired surrogate';

function addStorableTextKeywords(ajv: Ajv): void {
  for (const keyword of ['x-storable-text', 'x-storable-key']) {
    ajv.addKeyword({
      keyword,
      schemaType: 'boolean',
      errors: true,
      validate: function validateStorableText(_enabled: boolean, data: unknown) {
        if (typeof data !== 'string' || isStorableText(data)) return true;
        (validateStorableText as unknown as { errors: Partial<ErrorObject>[] }).errors = [
          { keyword, message: STORABLE_TEXT_MESSAGE, params: {} },
        ];
        return false;
      },
    });
  }
}

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

/** Deepest nesting of objects and arrays a body may have (docs/api-reference.md#request-rules). */
export const MAX_JSON_DEPTH = 32;

/**
 * Parses a JSON body. An empty body reads as `{}`. A body nested deeper than MAX_JSON_DEPTH is refused
 * before it is parsed, by a scan of its text (no recursion, no allocation: a 64 KiB body of `[[[[…` costs
 * one pass). Keys that could poison prototypes (`__proto__`, `constructor`, `prototype`) are removed at
 * any depth and returned, so the request answers 422 `unknown_field` for them before any code could
 * merge them into another object.
 */
export function parseJsonBody(text: string): { body: unknown; forbiddenFields: string[] } {
  if (text.trim() === '') return { body: {}, forbiddenFields: [] };
  if (nestingDepthExceeds(text, MAX_JSON_DEPTH)) {
    throw new ApiError('MALFORMED_JSON', { message: `The request body is nested deeper than ${MAX_JSON_DEPTH} levels.` });
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ApiError('MALFORMED_JSON');
  }
  return { body, forbiddenFields: removeForbiddenKeys(body) };
}

/** True when the JSON text opens more than `limit` objects or arrays at once (brackets inside strings do not count). */
export function nestingDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return false;
}

/** Deletes prototype-poisoning keys at any depth; returns their dotted paths. Iterative: depth never costs stack. */
function removeForbiddenKeys(root: unknown): string[] {
  const found: string[] = [];
  const pending: Array<{ value: unknown; path: string }> = [{ value: root, path: '' }];
  const at = (path: string, key: string) => (path === '' ? key : `${path}.${key}`);
  while (pending.length > 0) {
    const { value, path } = pending.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (Array.isArray(value)) {
      value.forEach((item, index) => pending.push({ value: item, path: at(path, String(index)) }));
      continue;
    }
    for (const key of Object.keys(value)) {
      if (FORBIDDEN_KEYS.has(key)) {
        found.push(at(path, key));
        delete (value as Record<string, unknown>)[key];
      } else {
        pending.push({ value: (value as Record<string, unknown>)[key], path: at(path, key) });
      }
    }
  }
  return found.sort();
}

export function unknownFieldErrors(fields: string[]): FieldError[] {
  return fields.map((field) => ({ field, code: 'unknown_field', message: 'is not a field of this request' }));
}

/**
 * A body schema compiled exactly as the routes' are (hardened, same Ajv, same keywords), for input that
 * does not arrive as a JSON body — the hosted pages' form posts: the field errors of `data`, none when it
 * is valid.
 */
export function compileBodyCheck(schema: object): (data: unknown) => FieldError[] {
  const validate = ajv.compile(hardenSchema(schema) as object) as ValidateFunction;
  return (data) => (validate(data) ? [] : fieldErrorsFromAjv(validate.errors ?? []));
}

/**
 * Ajv's errors as the contract's field errors, one per failing field: the first problem of each field wins,
 * except that a format (a pattern's or a format's) yields to any other — an empty account number is
 * `required` before it is malformed, though Ajv reaches the gated pattern (gateBehindLimits) first.
 */
export function fieldErrorsFromAjv(errors: ErrorObject[]): FieldError[] {
  const byField = new Map<string, FieldError>();
  for (const error of errors) {
    const fieldError = toFieldError(error);
    if (!fieldError) continue;
    const held = byField.get(fieldError.field);
    if (!held || (held.code === 'invalid_format' && fieldError.code !== 'invalid_format')) byField.set(fieldError.field, fieldError);
  }
  return [...byField.values()];
}

function toFieldError(error: ErrorObject): FieldError | null {
  // An empty key is a segment too: `/metadata/` is the key "" of metadata, reported as `metadata.`.
  const path = error.instancePath === '' ? [] : error.instancePath.slice(1).split('/').map(unescapePointer);
  // An error of a key itself (propertyNames: a metadata key too long, or not storable text) names the key, like
  // a value's error would.
  if (error.propertyName !== undefined && error.keyword === 'maxLength') {
    return { field: [...path, error.propertyName].join('.'), code: 'too_long', message: `keys must be at most ${(error.params as { limit: number }).limit} characters` };
  }
  if (error.keyword === 'x-storable-key') {
    return { field: [...path, String(error.data)].join('.'), code: 'invalid_value', message: `keys ${STORABLE_TEXT_MESSAGE}` };
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
    case 'x-storable-text':
      return field('invalid_value', STORABLE_TEXT_MESSAGE);
    case 'propertyNames':
      return null; // reported by the nested error on the property name itself
    case 'if':
      return null; // a size limit's gate (gateBehindLimits): the guarded keyword's own error says what failed
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
