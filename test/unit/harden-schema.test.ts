// The rules every request schema gets at compile time (src/kernel/validation.ts, hardenSchema).
import { describe, expect, it } from 'vitest';
import { hardenSchema, MAX_REQUEST_INTEGER, validatorCompiler } from '../../src/kernel/validation.ts';

describe('hardenSchema', () => {
  it('adds the text rule to every string and key, and a ceiling to every integer, wherever a schema sits', () => {
    const hardened = hardenSchema({
      type: 'object',
      properties: {
        name: { type: 'string' },
        page: { type: 'integer', minimum: 1 },
        tags: { type: 'array', items: { type: ['string', 'null'] } },
        either: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
        metadata: { type: 'object', additionalProperties: { type: 'string' }, propertyNames: { maxLength: 40 } },
      },
      additionalProperties: false,
    }) as any;
    expect(hardened.properties.name['x-storable-text']).toBe(true);
    expect(hardened.properties.page).toMatchObject({ minimum: 1, maximum: MAX_REQUEST_INTEGER });
    expect(hardened.properties.tags.items['x-storable-text']).toBe(true);
    expect(hardened.properties.either.anyOf[0]['x-storable-text']).toBe(true);
    expect(hardened.properties.either.anyOf[1].maximum).toBe(MAX_REQUEST_INTEGER);
    expect(hardened.properties.metadata.additionalProperties['x-storable-text']).toBe(true);
    expect(hardened.properties.metadata.propertyNames).toEqual({ maxLength: 40, 'x-storable-key': true });
    expect(hardened.propertyNames).toBeUndefined(); // a closed object refuses unknown keys by name
  });

  it('leaves values that are not schemas alone: enum, const, default, examples', () => {
    const schema = { type: 'string', enum: ['a', { type: 'string' }], default: { type: 'integer' }, examples: [{ type: 'string' }] };
    const hardened = hardenSchema(schema) as any;
    expect(hardened.enum).toEqual(schema.enum);
    expect(hardened.default).toEqual({ type: 'integer' });
    expect(hardened.examples).toEqual([{ type: 'string' }]);
  });

  it('refuses what it cannot harden: patternProperties (a line break escapes `^(.*)$`), not and if', () => {
    expect(() => hardenSchema({ type: 'object', patternProperties: { '^(.*)$': { type: 'string' } } })).toThrow(/additionalProperties/);
    expect(() => hardenSchema({ not: { type: 'string' } })).toThrow(/not\/if/);
    expect(() => hardenSchema({ if: { type: 'string' }, then: {} })).toThrow(/not\/if/);
  });

  it('does not change the schema it was given (OpenAPI shows the original)', () => {
    const schema = { type: 'object', properties: { name: { type: 'string' } } };
    hardenSchema(schema);
    expect(schema).toEqual({ type: 'object', properties: { name: { type: 'string' } } });
  });
});

describe('size limits before per-character, per-item and per-key work (gateBehindLimits)', () => {
  const raw = (schema: object) => {
    const validate = validatorCompiler({ schema, httpPart: 'body', method: 'POST', url: '/' } as never) as unknown as ((data: unknown) => boolean) & { errors: Array<{ keyword: string; instancePath: string }> | null };
    return (data: unknown) => {
      validate(data);
      return (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.keyword}`);
    };
  };

  it('runs no pattern on a string over its maxLength, and still runs it within', () => {
    const check = raw({ type: 'object', properties: { account: { type: 'string', maxLength: 34, pattern: '^[0-9]+$' } } });
    expect(check({ account: '1'.repeat(60_000) })).toEqual(['/account maxLength']);
    expect(check({ account: 'x'.repeat(60_000) })).toEqual(['/account maxLength']);
    expect(check({ account: '12a' })).toContain('/account pattern');
    expect(check({ account: '12' })).toEqual([]);
  });

  it('checks no item of an array over its maxItems, and each item within', () => {
    const check = raw({ type: 'object', properties: { events: { type: 'array', maxItems: 3, items: { type: 'string', enum: ['a', 'b'] } } } });
    expect(check({ events: Array(30_000).fill('zz') })).toEqual(['/events maxItems']);
    expect(check({ events: ['a', 'zz'] })).toContain('/events/1 enum');
  });

  it('checks no key or value of an object over its maxProperties', () => {
    const check = raw({ type: 'object', properties: { metadata: { type: 'object', maxProperties: 2, additionalProperties: { type: 'string' }, propertyNames: { maxLength: 3 } } } });
    const many = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`long-key-${i}`, i]));
    expect(check({ metadata: many })).toEqual(['/metadata maxProperties']);
    expect(check({ metadata: { abcd: 1 } }).length).toBeGreaterThan(0);
  });

  it('refuses, when the app is built, a pattern without a maxLength', () => {
    expect(() => hardenSchema({ type: 'string', pattern: '^a+$' })).toThrow(/needs a maxLength/);
  });
});
