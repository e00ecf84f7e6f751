// Requests to one route of the OpenAPI document: well-formed ones drawn from its schemas, and mutated ones —
// a well-formed request with exactly one thing broken — each with the refusal docs/api-reference.md promises for it.
import fc from 'fast-check';
import { centavos, formatCentavos } from '../../src/money.ts';
import { percentEncode } from './http.ts';
import { FORBIDDEN_KEYS, hostileText, requiredOnly, unpairedSurrogate, validValue, type FieldHints, type JsonSchema } from './json-schema-arbitrary.ts';
import { rawToken, toJsonText, type Parameter, type RequestParts, type Route } from './openapi-routes.ts';

/** What a route's requests may use: existing ids for its path parameters, and hints for body and query fields. */
export interface RequestScope {
  /** Ids of existing resources for a path parameter, percent-encoded; empty when there are none. */
  pathValues(route: Route, parameter: Parameter): string[];
  hints: FieldHints;
}

/** What the API reference says the answer to a mutated request is. */
export interface Refusal {
  /** The statuses allowed (any 4xx when absent). */
  statuses?: readonly number[];
  /** The error code the body must carry. */
  code?: string;
  /** A 422 must name this field (dotted path, `(body)` for the body itself) among its `errors`. */
  field?: string;
}

export interface Mutation {
  /** What was broken, for the failure message. */
  what: string;
  parts: RequestParts;
  /** The refusal the contract promises; null where it leaves the answer open (only: never a 5xx, and a 4xx changes nothing). */
  refusal: Refusal | null;
}

/** docs/api-reference.md, Hostile input: bounds of query integers, in case a schema does not state them. */
const CONTRACT_QUERY_BOUNDS: Record<string, { min: number; max: number }> = {
  page: { min: 1, max: 1_000_000 },
  before_id: { min: 1, max: Number.MAX_SAFE_INTEGER },
};

const BODY_LIMIT_BYTES = 64 * 1024;
/** docs/api-reference.md, Hostile input: a body nested deeper than this is refused as 400 MALFORMED_JSON. */
const MAX_BODY_DEPTH = 32;

const MALFORMED_JSON: Refusal = { statuses: [400], code: 'MALFORMED_JSON' };
const invalidField = (field: string): Refusal => ({ statuses: [422], code: 'VALIDATION_FAILED', field });

// ---------------------------------------------------------------------------------------------------
// Well-formed requests

/** The value of one path parameter: an existing id most of the time, otherwise any value of its schema. */
function pathValue(route: Route, parameter: Parameter, scope: RequestScope, onlyExisting: boolean): fc.Arbitrary<string> {
  const existing = scope.pathValues(route, parameter);
  // An empty or dot-only segment would be another path (`/simple-qrs/` is the list), not a value of this parameter.
  const fromSchema = validValue(parameter.schema).map((value) => percentEncode(String(value))).filter((segment) => !/^\.*$/.test(segment));
  if (existing.length === 0) return fromSchema;
  if (onlyExisting) return fc.constantFrom(...existing);
  return fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...existing) }, { weight: 1, arbitrary: fromSchema });
}

/** A query value as text: integers in canonical decimal, which is how a client writes them. */
function queryValue(parameter: Parameter, hints: FieldHints): fc.Arbitrary<string> {
  return (hints[parameter.name] ?? validValue(withContractBounds(parameter), hints)).map(String);
}

function withContractBounds(parameter: Parameter): JsonSchema {
  const bounds = CONTRACT_QUERY_BOUNDS[parameter.name];
  if (!bounds || parameter.schema.type !== 'integer') return parameter.schema;
  return {
    ...parameter.schema,
    minimum: Math.max(parameter.schema.minimum ?? bounds.min, bounds.min),
    maximum: Math.min(parameter.schema.maximum ?? bounds.max, bounds.max),
  };
}

/**
 * A request the route's schemas accept. For the base of a mutation, which must be right but for the
 * mutation: `onlyExisting`, path ids always name existing resources of the scope; `minimalBody`, the body
 * has its required fields only (a field the schema accepts may still break a business rule, whose 422
 * comes before a path's 404 in the order of checks).
 */
export function wellFormedRequest(route: Route, scope: RequestScope, options: { onlyExisting?: boolean; minimalBody?: boolean } = {}): fc.Arbitrary<RequestParts> {
  const path = fc.record(Object.fromEntries(route.pathParameters.map((p) => [p.name, pathValue(route, p, scope, options.onlyExisting ?? false)])));
  const query = fc.tuple(...route.queryParameters.map((p) => fc.option(queryValue(p, scope.hints), { nil: undefined })))
    .map((values) => values.flatMap((value, index): Array<[string, string]> => value === undefined ? [] : [[route.queryParameters[index]!.name, value]]));
  const bodySchema = route.body && options.minimalBody ? requiredOnly(route.body) : route.body;
  const body = bodySchema ? validValue(bodySchema, scope.hints).map((json) => ({ json })) : fc.constant(undefined);
  return fc.record({ path, query, body }).map(({ path, query, body }) => (body === undefined ? { path, query } : { path, query, body }));
}

// ---------------------------------------------------------------------------------------------------
// Mutated requests

/** Every way this route's well-formed requests can be broken, each family equally likely. */
export function mutatedRequest(route: Route, scope: RequestScope): fc.Arbitrary<Mutation> {
  const base = wellFormedRequest(route, scope, { onlyExisting: true });
  const families: Array<fc.Arbitrary<Mutation>> = [];
  if (route.body) {
    const bodySchema = route.body;
    families.push(base.chain((parts) => bodyValueMutation(bodySchema, parts)));
    families.push(base.chain((parts) => bodyEncodingMutation(route, bodySchema, parts)));
  }
  if (route.queryParameters.length > 0) families.push(base.chain((parts) => queryMutation(route, parts)));
  const minimalBase = wellFormedRequest(route, scope, { onlyExisting: true, minimalBody: true });
  for (const parameter of route.pathParameters) families.push(minimalBase.chain((parts) => pathMutation(parameter, parts)));
  return fc.oneof(...families).map(labelled);
}

/** fast-check prints a counterexample through this: what was broken (the failure message shows the request itself). */
function labelled(mutation: Mutation): Mutation {
  return Object.defineProperty(mutation, fc.toStringMethod, { value: () => `mutation: ${mutation.what}` });
}

// --- body values: one field (or the body itself) broken -----------------------------------------------

type Path = string[];
interface Site {
  path: Path;
  schema: JsonSchema;
  /** The value there; undefined for an optional property the base left out. */
  value: unknown;
}

const fieldOf = (path: Path) => path.join('.') || '(body)';
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Every node of `value` with its schema, plus the optional properties it leaves out. */
function sitesOf(schema: JsonSchema, value: unknown, path: Path = []): Site[] {
  const sites: Site[] = [{ path, schema, value }];
  if (isObject(value)) {
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      if (!(name in value)) sites.push({ path: [...path, name], schema: property, value: undefined });
    }
    for (const [key, child] of Object.entries(value)) {
      const childSchema = schema.properties?.[key] ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
      if (childSchema) sites.push(...sitesOf(childSchema, child, [...path, key]));
    }
  }
  if (Array.isArray(value) && schema.items) value.forEach((item, index) => sites.push(...sitesOf(schema.items!, item, [...path, String(index)])));
  return sites;
}

/** `body` with the value at `path` replaced (the body itself when `path` is empty), or removed when `value` is undefined. */
function withValueAt(body: unknown, path: Path, value: unknown): unknown {
  if (path.length === 0) return value;
  const copy: Record<string, unknown> | unknown[] = Array.isArray(body) ? [...body] : { ...(body as Record<string, unknown>) };
  const [head, ...rest] = path as [string, ...string[]];
  const replaced = rest.length === 0 ? value : withValueAt((copy as Record<string, unknown>)[head], rest, value);
  if (replaced === undefined && !Array.isArray(copy)) delete copy[head];
  else (copy as Record<string, unknown>)[head] = replaced;
  return copy;
}

/** The object at `path` with one more own key — also `__proto__`, which an object literal would take as its prototype. */
function withKeyAt(body: unknown, path: Path, key: string, value: unknown): unknown {
  const target = path.reduce<unknown>((node, step) => (node as Record<string, unknown>)[step], body);
  const copy = { ...(target as Record<string, unknown>) };
  Object.defineProperty(copy, key, { value, enumerable: true, writable: true, configurable: true });
  return withValueAt(body, path, copy);
}

interface Change {
  what: string;
  body: unknown;
  refusal: Refusal;
}

function bodyValueMutation(schema: JsonSchema, parts: RequestParts): fc.Arbitrary<Mutation> {
  const body = (parts.body as { json: unknown }).json;
  const changes = sitesOf(schema, body).flatMap((site) => siteChanges(site, body));
  return fc.oneof(...changes).map((change) => ({ what: change.what, parts: { ...parts, body: { json: change.body } }, refusal: change.refusal }));
}

function typesOf(schema: JsonSchema): string[] {
  if (schema['x-money']) return ['number', 'string'];
  if (schema.type === undefined) return [];
  return Array.isArray(schema.type) ? schema.type : [schema.type];
}

function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function acceptsType(schema: JsonSchema, value: unknown): boolean {
  const types = typesOf(schema);
  const type = jsonTypeOf(value);
  return types.includes(type) || (type === 'integer' && types.includes('number'));
}

const WRONG_TYPE_VALUES: unknown[] = ['1', 'true', 1, 1.5, true, false, null, [], {}, [1], { value: 1 }];

/** JSON numbers no id, business_code or bank code can be: too large, not whole, negative, zero. */
const IMPOSSIBLE_INTEGERS = ['99999999999999999999', '1e300', '-1e300', '9007199254740993', '-0', '0', '-1', '1.5', '1e-7'];

/** Amounts the API reference refuses (Money), as JSON tokens (numbers and strings). */
const REFUSED_AMOUNTS = [
  '1e300', '99999999999999999999', '-0', '0', '-1', '-5', '10.001', '0.001',
  '"NaN"', '"Infinity"', '"1e3"', '""', '" 1"', '"1 "', '"1,50"', '"0x10"', '"-5"', '"+1"', '"1."', '".5"', '"1.001"', '"١٢"',
];

function siteChanges(site: Site, body: unknown): Array<fc.Arbitrary<Change>> {
  const { path, schema, value } = site;
  const field = fieldOf(path);
  const change = (what: string, replacement: unknown, refusal: Refusal): Change => ({ what: `${field}: ${what}`, body: withValueAt(body, path, replacement), refusal });
  const changes: Array<fc.Arbitrary<Change>> = [];
  const types = typesOf(schema);
  const money = schema['x-money'];

  const wrongTypes = WRONG_TYPE_VALUES.filter((candidate) => types.length > 0 && !acceptsType(schema, candidate));
  if (wrongTypes.length > 0) changes.push(fc.constantFrom(...wrongTypes).map((wrong) => change(`of the wrong type (${JSON.stringify(wrong)})`, wrong, invalidField(field))));

  // Deeper than the contract allows, wherever the value sits.
  changes.push(fc.record({ depth: fc.integer({ min: MAX_BODY_DEPTH + 8, max: 5000 }), kind: fc.constantFrom('arrays', 'objects') })
    .map(({ depth, kind }) => change(`${depth} levels of ${kind}`, rawToken(nested(depth, kind)), MALFORMED_JSON)));

  if (money) {
    const outOfBounds = [formatCentavos(centavos(money.min - 1)), formatCentavos(centavos(money.max + 1))];
    changes.push(fc.constantFrom(...REFUSED_AMOUNTS, ...outOfBounds).map((token) => change(`the amount ${token}`, rawToken(token), invalidField(field))));
    changes.push(fc.constantFrom('NaN', 'Infinity', '-Infinity', '+1', '0x10', '01').map((token) => change(`the bare token ${token}`, rawToken(token), MALFORMED_JSON)));
  } else if (types.includes('string')) {
    changes.push(fc.tuple(hostileText({ maxLength: 8 }), hostileText({ maxLength: 8 }))
      .map(([before, after]) => change('text with U+0000', `${before}\0${after}`, invalidField(field))));
    changes.push(fc.tuple(hostileText({ maxLength: 8 }), unpairedSurrogate, hostileText({ maxLength: 8 }))
      .map(([before, surrogate, after]) => change('text with an unpaired surrogate', `${before}${surrogate}${after}`, invalidField(field))));
    if (schema.maxLength !== undefined) {
      const maxLength = schema.maxLength;
      changes.push(fc.integer({ min: maxLength + 1, max: maxLength + 64 }).map((length) => change(`${length} characters (at most ${maxLength})`, 'x'.repeat(length), invalidField(field))));
    }
    if ((schema.minLength ?? 0) >= 1) changes.push(fc.constant(change('empty', '', invalidField(field))));
    if (schema.pattern !== undefined) {
      const pattern = new RegExp(schema.pattern, 'u');
      changes.push(hostileText({ maxLength: Math.min(schema.maxLength ?? 40, 40) }).filter((text) => !pattern.test(text) && !text.includes('\0'))
        .map((text) => change(`${JSON.stringify(text)} against /${schema.pattern}/`, text, invalidField(field))));
    }
  }
  if (schema.enum) {
    const misses = schema.enum.flatMap((allowed) => typeof allowed === 'string'
      ? [allowed.toLowerCase(), allowed.toUpperCase(), ` ${allowed}`, `${allowed} `, `${allowed}x`, '']
      : [String(allowed)]).filter((miss) => !schema.enum!.includes(miss) && acceptsType(schema, miss));
    if (misses.length > 0) changes.push(fc.constantFrom(...misses).map((miss) => change(`${JSON.stringify(miss)}, not one of the enum`, miss, invalidField(field))));
  }
  if (types.includes('integer') && !money) {
    // A number the schema takes is still refused where it can only be an id or business_code that does not exist.
    const impossible = IMPOSSIBLE_INTEGERS.filter((token) => JSON.parse(token) !== value && !(schema.enum && schema.enum.includes(JSON.parse(token))));
    changes.push(fc.constantFrom(...impossible).map((token) => change(`the number ${token}`, rawToken(token),
      violatesInteger(schema, JSON.parse(token) as number) ? invalidField(field) : {})));
  }
  if (types.includes('object') && isObject(value)) changes.push(...objectChanges(site, body));
  if (types.includes('array') && Array.isArray(value)) {
    if (schema.maxItems !== undefined && value.length > 0) {
      const tooMany = Array.from({ length: schema.maxItems + 1 }, (_, index) => value[index % value.length]);
      changes.push(fc.constant(change(`${tooMany.length} items (at most ${schema.maxItems})`, tooMany, invalidField(field))));
    }
    if ((schema.minItems ?? 0) >= 1) changes.push(fc.constant(change('no items', [], invalidField(field))));
  }
  return changes;
}

function objectChanges(site: Site, body: unknown): Array<fc.Arbitrary<Change>> {
  const { path, schema, value } = site;
  const object = value as Record<string, unknown>;
  const field = fieldOf(path);
  const changes: Array<fc.Arbitrary<Change>> = [];
  const keyed = (what: string, key: string, keyValue: unknown, refusal: Refusal): Change =>
    ({ what: `${field}: ${what}`, body: withKeyAt(body, path, key, keyValue), refusal });

  // Prototype keys are refused at any depth, also one level below where they are added.
  changes.push(fc.record({ key: fc.constantFrom(...FORBIDDEN_KEYS), deeper: fc.boolean(), keyValue: fc.constantFrom<unknown>(1, null, {}, { polluted: true }, 'x') })
    .map(({ key, deeper, keyValue }) => deeper
      ? keyed(`the key inner.${key}`, 'inner', JSON.parse(`{"${key}": ${JSON.stringify(keyValue)}}`), invalidField([...path, 'inner', key].join('.')))
      : keyed(`the key ${key}`, key, keyValue, invalidField([...path, key].join('.')))));

  if (schema.additionalProperties === false) {
    const known = new Set(Object.keys(schema.properties ?? {}));
    const unknownKey = fc.oneof(
      fc.constantFrom('extra', 'id', 'businessCode', 'Amount', 'amount ', 'toString', 'hasOwnProperty', 'valueOf', '__proto', 'proto'),
      hostileText({ minLength: 1, maxLength: 12 }),
    ).filter((key) => !known.has(key) && !(FORBIDDEN_KEYS as readonly string[]).includes(key) && !key.includes('\0'));
    changes.push(unknownKey.map((key) => keyed(`the unknown field ${JSON.stringify(key)}`, key, 1, invalidField([...path, key].join('.')))));
  }
  const present = (schema.required ?? []).filter((name) => name in object);
  if (present.length > 0) {
    changes.push(fc.constantFrom(...present).map((name) => ({
      what: `${field}: without the required ${name}`, body: withValueAt(body, [...path, name], undefined), refusal: invalidField([...path, name].join('.')),
    })));
  }
  if (typeof schema.additionalProperties === 'object') {
    changes.push(fc.constant(keyed('a key with U+0000', 'a\0b', 'x', { statuses: [422], code: 'VALIDATION_FAILED' })));
    const maxKeyLength = schema.propertyNames?.maxLength;
    if (maxKeyLength !== undefined) {
      const key = 'k'.repeat(maxKeyLength + 1);
      changes.push(fc.constant(keyed(`a key of ${key.length} characters`, key, 'x', invalidField([...path, key].join('.')))));
    }
    if (schema.maxProperties !== undefined) {
      const crowded = Object.fromEntries(Array.from({ length: schema.maxProperties + 1 }, (_, index) => [`k${index}`, null]));
      changes.push(fc.constant({ what: `${field}: ${schema.maxProperties + 1} keys`, body: withValueAt(body, path, crowded), refusal: invalidField(field) }));
    }
  }
  return changes;
}

function violatesInteger(schema: JsonSchema, value: number): boolean {
  return !Number.isInteger(value)
    || (schema.minimum !== undefined && value < schema.minimum)
    || (schema.maximum !== undefined && value > schema.maximum)
    || (schema.enum !== undefined && !schema.enum.includes(value));
}

function nested(depth: number, kind: 'arrays' | 'objects'): string {
  return kind === 'arrays' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

// --- body encoding: the bytes, not the fields -----------------------------------------------------

const NOT_JSON = [
  '{', '{"a":1,}', "{'a':1}", '{"a":1}{"b":2}', '[1,]', 'NaN', 'undefined', '{"a":01}', '{"a":.5}', '{"a":"\u0001"}',
  '\u0000', '{"a":1', '"unterminated', '{"a":tru}', '//\n{}', '{a:1}', '{"a":1}}', ']',
];

const OTHER_CONTENT_TYPES = [
  'text/plain', 'text/plain; charset=utf-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=fuzz',
  'application/xml', 'application/jsonx', 'text/json', 'application/octet-stream',
];

function bodyEncodingMutation(route: Route, schema: JsonSchema, parts: RequestParts): fc.Arbitrary<Mutation> {
  const text = toJsonText((parts.body as { json: unknown }).json);
  const withText = (what: string, body: RequestParts['body'], refusal: Refusal | null): Mutation => ({ what, parts: { ...parts, body }, refusal });
  const json = (bodyText: string) => ({ text: bodyText, contentType: 'application/json' });
  const mutations: Array<fc.Arbitrary<Mutation>> = [
    fc.constantFrom(...NOT_JSON).map((bad) => withText(`a body that is not JSON: ${JSON.stringify(bad)}`, json(bad), MALFORMED_JSON)),
    fc.integer({ min: 1, max: Math.max(1, text.length - 1) }).map((length) => withText(`the body cut after ${length} characters`, json(text.slice(0, length)), MALFORMED_JSON)),
    fc.constantFrom(...OTHER_CONTENT_TYPES).map((contentType) => withText(`a JSON body sent as ${contentType}`, { text, contentType }, { statuses: [415], code: 'UNSUPPORTED_MEDIA_TYPE' })),
    fc.constant(withText('a JSON body without Content-Type', { text }, { statuses: [415], code: 'UNSUPPORTED_MEDIA_TYPE' })),
    // Spaces keep it valid JSON: only its size is wrong.
    fc.constant(withText('a body past 64 KiB', json(text + ' '.repeat(BODY_LIMIT_BYTES)), { statuses: [413], code: 'PAYLOAD_TOO_LARGE' })),
    // As deep as the body limit allows: a depth check that recurses would overflow its stack here.
    fc.constantFrom<'arrays' | 'objects'>('arrays', 'objects').map((kind) => {
      const depth = kind === 'arrays' ? 32_700 : 10_900;
      return withText(`${depth} levels of ${kind} as the body`, json(nested(depth, kind)), MALFORMED_JSON);
    }),
  ];
  const required = schema.required ?? [];
  if (route.method === 'POST' && required.length > 0) {
    // An empty POST body is read as {} (Request rules), so it lacks the required fields.
    mutations.push(fc.constantFrom<RequestParts['body']>(json(''), { text: '' }, undefined)
      .map((body) => withText(`an empty body (fields required: ${required.join(', ')})`, body, invalidField(required[0]!))));
  }
  return fc.oneof(...mutations);
}

// --- query strings ------------------------------------------------------------------------------

function queryMutation(route: Route, parts: RequestParts): fc.Arbitrary<Mutation> {
  const declared = route.queryParameters.map((p) => p.name);
  const setting = (name: string, text: string) => [...parts.query.filter(([other]) => other !== name), [name, text] as [string, string]];
  const mutation = (what: string, query: Array<[string, string]>, refusal: Refusal | null): Mutation => ({ what, parts: { ...parts, query }, refusal });
  const mutations: Array<fc.Arbitrary<Mutation>> = [];

  const unknownName = fc.oneof(
    fc.constantFrom('perpage', 'Page', 'page ', 'per-page', 'limit', 'offset', '__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString', 'page[]', 'page.x'),
    hostileText({ minLength: 1, maxLength: 12 }),
  ).map(asSentInUtf8).filter((name) => !declared.includes(name));
  mutations.push(unknownName.map((name) => mutation(`the unknown query parameter ${JSON.stringify(name)}`, [...parts.query, [name, '1']], invalidField(name))));

  for (const parameter of route.queryParameters) {
    const name = parameter.name;
    const schema = withContractBounds(parameter);
    const refusal = invalidField(name);
    mutations.push(fc.constantFrom('', '\0', `x\0`).map((text) => mutation(`${name}=${JSON.stringify(text)}`, setting(name, text), refusal)));
    mutations.push(queryValue(parameter, {}).map((text) => mutation(`${name} given twice`, [...setting(name, text), [name, text]], null)));
    if (schema.type === 'integer') {
      mutations.push(fc.tuple(validValue(schema) as fc.Arbitrary<number>, fc.integer({ min: 0, max: 11 })).map(([value, form]) => {
        const text = nonCanonicalForms(value)[form]!;
        return mutation(`${name}=${JSON.stringify(text)}, a non-canonical ${value}`, setting(name, text), refusal);
      }));
      const outOfRange = ['0', '-1', '-0', '1000001', '143165578', '9007199254740992', '99999999999999999999', '1e300', 'NaN', 'Infinity', 'true',
        ...(schema.maximum !== undefined ? [String(schema.maximum + 1)] : [])]
        .filter((text) => !isCanonicalWithin(text, schema));
      mutations.push(fc.constantFrom(...outOfRange).map((text) => mutation(`${name}=${text}`, setting(name, text), refusal)));
    }
    if (schema.enum) {
      const misses = schema.enum.flatMap((value) => [String(value).toLowerCase(), String(value).toUpperCase(), `${value} `, `${value},${value}`])
        .filter((miss) => !schema.enum!.includes(miss));
      if (misses.length > 0) mutations.push(fc.constantFrom(...misses).map((miss) => mutation(`${name}=${JSON.stringify(miss)}`, setting(name, miss), refusal)));
    }
  }
  return fc.oneof(...mutations);
}

/** The text the service receives for `text` sent as UTF-8: a lone surrogate arrives as U+FFFD. */
const asSentInUtf8 = (text: string) => Buffer.from(text, 'utf8').toString('utf8');

/** Ways to write `value` that are not canonical decimal (Hostile input: sign, exponent, fraction, hex, leading zero; and spaces). */
function nonCanonicalForms(value: number): string[] {
  return [`${value}.0`, `0x${value.toString(16)}`, `+${value}`, `0${value}`, `${value}e0`, ` ${value}`, `${value} `, `${value}.`,
    `00${value}.00`, `${value / 10}e1`, `0o${value.toString(8)}`, `0b${value.toString(2)}`];
}

function isCanonicalWithin(text: string, schema: JsonSchema): boolean {
  if (!/^(0|[1-9][0-9]*)$/.test(text)) return false;
  const value = Number(text);
  return (schema.minimum === undefined || value >= schema.minimum) && (schema.maximum === undefined || value <= schema.maximum);
}

// --- path parameters ----------------------------------------------------------------------------

function pathMutation(parameter: Parameter, parts: RequestParts): fc.Arbitrary<Mutation> {
  const name = parameter.name;
  const existing = parts.path[name]!;
  const mutation = (what: string, value: string, refusal: Refusal): Mutation =>
    ({ what: `path ${name}: ${what}`, parts: { ...parts, path: { ...parts.path, [name]: value } }, refusal });
  // Identifiers: an id that does not exist answers 404 (a non-canonical integer, one past the bounds, a string past its length).
  const notFound: Refusal = { statuses: [404], code: 'NOT_FOUND' };
  const garbage = fc.constantFrom('%00', `${existing}%00`, `%00${existing}`, `${existing}%20`, `%20${existing}`, '%', '%ZZ', '%C0%AF', '%ED%A0%80', '%FF', `${existing}%2F`, `${existing}x`, '%E2%80%AE');
  if (parameter.schema.type === 'integer') {
    const value = Number(existing);
    return fc.oneof(
      fc.integer({ min: 0, max: 11 }).map((form) => {
        const text = percentEncode(nonCanonicalForms(value)[form]!);
        return mutation(`${JSON.stringify(text)}, a non-canonical ${value}`, text, notFound);
      }),
      fc.constantFrom('-1', `-${existing}`, '1e3', `${value}.5`).map((text) => mutation(text, text, notFound)),
      fc.constantFrom('0', '9007199254740992', '99999999999999999999', `1${'0'.repeat(400)}`).map((text) => mutation(text, text, notFound)),
      garbage.map((text) => mutation(text, text, notFound)),
    );
  }
  return fc.oneof(
    garbage.map((text) => mutation(text, text, notFound)),
    fc.integer({ min: 65, max: 5000 }).map((length) => mutation(`${length} characters`, 'x'.repeat(length), notFound)),
  );
}
