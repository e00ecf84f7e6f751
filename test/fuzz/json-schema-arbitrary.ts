// Valid values of a JSON Schema as fast-check arbitraries, for the subset of JSON Schema that the service's
// TypeBox schemas put into its OpenAPI document: type (one or a list), enum, const, min/maxLength, pattern,
// minimum/maximum, properties/required/additionalProperties, items/min/maxItems, maxProperties,
// propertyNames, and the service's own `x-money` keyword (src/kernel/validation.ts).
//
// Why a converter of our own rather than a library: json-schema-fast-check (0.0.6, the one npm package that
// targets fast-check) is built on fast-check 1 and faker 4; json-schema-faker draws with its own randomness,
// so its values neither follow fast-check's seed nor shrink, and neither knows `x-money`. The subset above is
// small, and an arbitrary per keyword keeps every value reproducible and shrinkable.
//
// Strings are drawn from `hostileText`: printable text mixed with control characters, astral characters,
// HTML and JSON metacharacters — everything except U+0000 and unpaired surrogates, which the service
// refuses in text (the database cannot store them as sent): those are mutations (requests.ts), not valid values.
import fc from 'fast-check';

export interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  maxProperties?: number;
  propertyNames?: JsonSchema;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  format?: string;
  'x-money'?: { min: number; max: number };
}

/**
 * Arbitraries chosen by property name instead of by schema: the document says a `business_code` is an
 * integer, not that it must be the caller's, so without a hint nearly every request would stop at 403.
 */
export type FieldHints = Readonly<Record<string, fc.Arbitrary<unknown>>>;

/** Keys the service refuses at any depth (API conventions: removed by the parser, answered 422). */
export const FORBIDDEN_KEYS = ['__proto__', 'constructor', 'prototype'] as const;

/** Length as JSON Schema (and Ajv) count it: code points, a lone surrogate counting as one. */
export const textLength = (text: string): number => [...text].length;

const codePoint = (min: number, max: number) => fc.integer({ min, max }).map((point) => String.fromCodePoint(point));

/** One character of hostile text; never U+0000, never an unpaired surrogate. */
export const hostileCharacter: fc.Arbitrary<string> = fc.oneof(
  { weight: 12, arbitrary: codePoint(0x20, 0x7e) },
  { weight: 2, arbitrary: fc.constantFrom('"', '\\', '<', '>', '&', "'", '%', '+', '/', ';', '=', '?', '#', ' ', '\u2028', '\u2029', '\ufeff', '\u202e', '\ufffd', '\uffff') },
  { weight: 2, arbitrary: fc.oneof(codePoint(0x01, 0x1f), codePoint(0x7f, 0x9f)) },
  { weight: 2, arbitrary: codePoint(0xa0, 0xd7ff) },
  { weight: 1, arbitrary: codePoint(0x10000, 0x10ffff) },
);

/** A lone surrogate: valid in a JSON string, not representable in UTF-8 (the service refuses it in text). */
export const unpairedSurrogate: fc.Arbitrary<string> = codePoint(0xd800, 0xdfff);

export function hostileText(constraints: { minLength?: number; maxLength?: number } = {}): fc.Arbitrary<string> {
  return fc.string({ unit: hostileCharacter, ...constraints });
}

function typesOf(schema: JsonSchema): string[] {
  if (schema.type === undefined) return [];
  return Array.isArray(schema.type) ? schema.type : [schema.type];
}

/** An arbitrary of the values `schema` accepts; `hints` replace the schema for the properties they name. */
export function validValue(schema: JsonSchema, hints: FieldHints = {}): fc.Arbitrary<unknown> {
  if (schema['x-money']) return moneyAmount(schema['x-money']);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const types = typesOf(schema);
  if (types.length > 1) return fc.oneof(...types.map((type) => validValue({ ...schema, type }, hints)));
  switch (types[0]) {
    case 'string':
      return validText(schema);
    case 'integer':
      return validInteger(schema);
    case 'number':
      return fc.double({
        min: schema.minimum ?? -Number.MAX_VALUE, max: schema.maximum ?? Number.MAX_VALUE, noNaN: true, noDefaultInfinity: true,
      });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(validValue(schema.items ?? {}, hints), { minLength: schema.minItems ?? 0, maxLength: schema.maxItems ?? 5 });
    case 'object':
      return validObject(schema, hints);
    default:
      throw new Error(`the fuzz generator does not know the schema ${JSON.stringify(schema)}`);
  }
}

/** The schema of the smallest values of `schema`: every object with its required properties only. */
export function requiredOnly(schema: JsonSchema): JsonSchema {
  if (!schema.properties) return schema;
  const required = schema.required ?? [];
  return { ...schema, properties: Object.fromEntries(required.map((name) => [name, requiredOnly(schema.properties![name]!)])) };
}

function validInteger(schema: JsonSchema): fc.Arbitrary<number> {
  const min = schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : schema.minimum ?? Number.MIN_SAFE_INTEGER;
  const max = schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : schema.maximum ?? Number.MAX_SAFE_INTEGER;
  return fc.bigInt({ min: BigInt(min), max: BigInt(max) }).map(Number);
}

function validText(schema: JsonSchema): fc.Arbitrary<string> {
  const minLength = schema.minLength ?? 0;
  const maxLength = schema.maxLength ?? 300;
  const fitsLength = (text: string) => textLength(text) >= minLength && textLength(text) <= maxLength && !text.includes('\0');
  if (schema.pattern !== undefined) {
    const pattern = new RegExp(schema.pattern, 'u'); // Ajv compiles patterns with the u flag
    // An anchored pattern describes the whole string: generate from it. An unanchored one (`\S`) only asks
    // for some part of it, so hostile text that happens to contain a match is the richer source.
    const source = schema.pattern.startsWith('^') && schema.pattern.endsWith('$')
      ? fc.stringMatching(pattern)
      : fc.oneof(hostileText({ minLength, maxLength: Math.min(maxLength, 40) }), hostileText({ minLength: maxLength, maxLength }));
    return source.filter((text) => fitsLength(text) && pattern.test(text));
  }
  // Mostly short text, sometimes text of exactly the longest length allowed.
  return fc.oneof(
    { weight: 4, arbitrary: hostileText({ minLength, maxLength: Math.min(maxLength, 40) }) },
    { weight: 1, arbitrary: hostileText({ minLength: maxLength, maxLength }) },
  ).filter(fitsLength);
}

function validObject(schema: JsonSchema, hints: FieldHints): fc.Arbitrary<Record<string, unknown>> {
  if (schema.properties) {
    const model = Object.fromEntries(Object.entries(schema.properties).map(([name, property]) => [name, hints[name] ?? validValue(property, hints)]));
    return fc.record(model, { requiredKeys: schema.required ?? [] });
  }
  if (typeof schema.additionalProperties === 'object') {
    const key = validText({ type: 'string', ...schema.propertyNames }).filter((name) => !(FORBIDDEN_KEYS as readonly string[]).includes(name));
    return fc.dictionary(key, validValue(schema.additionalProperties, hints), { maxKeys: schema.maxProperties ?? 10, noNullPrototype: true });
  }
  return fc.constant({});
}

/** Centavos as the three forms an amount may take: a JSON number (12.3), a two-decimal string ("12.30"), a short string ("12.3"). */
export function amountForms(centavos: number): Array<number | string> {
  const whole = Math.floor(centavos / 100);
  const cents = centavos % 100;
  const twoDecimals = `${whole}.${String(cents).padStart(2, '0')}`;
  const short = cents === 0 ? String(whole) : cents % 10 === 0 ? `${whole}.${cents / 10}` : twoDecimals;
  return [centavos / 100, twoDecimals, short];
}

function moneyAmount(bounds: { min: number; max: number }): fc.Arbitrary<number | string> {
  return fc.tuple(fc.integer({ min: bounds.min, max: bounds.max }), fc.integer({ min: 0, max: 2 }))
    .map(([centavos, form]) => amountForms(centavos)[form]!);
}
