// The hosted pages' catalogues and the Locale that writes with them (no database, no browser).
import { describe, expect, it } from 'vitest';
import { chooseLang, Locale, Markup } from '../../src/kernel/i18n/locale.ts';
import { en } from '../../src/kernel/i18n/messages-en.ts';
import { es } from '../../src/kernel/i18n/messages-es.ts';

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
const nbsp = (text: string) => text.replace(/\u00a0/g, ' ');

describe('the catalogues', () => {
  it('define the same keys in both languages, none empty', () => {
    expect(Object.keys(es).sort()).toEqual(Object.keys(en).sort());
    for (const catalogue of [es, en]) {
      for (const [key, text] of Object.entries(catalogue)) expect(text.trim(), key).not.toBe('');
    }
  });

  it('use the same placeholders for each key in both languages', () => {
    for (const key of Object.keys(en) as (keyof typeof en)[]) {
      expect(placeholders(es[key]), key).toEqual(placeholders(en[key]));
    }
  });

  it('give every plural a form for `other`', () => {
    for (const key of Object.keys(en)) {
      const match = /^(.*)\.(one|other)$/.exec(key);
      if (match) expect(Object.keys(en), key).toContain(`${match[1]}.other`);
    }
  });
});

describe('choosing the language', () => {
  it('takes ?lang=, then Accept-Language, then Spanish', () => {
    expect(chooseLang('en', 'es')).toEqual({ lang: 'en', explicit: true });
    expect(chooseLang('es', 'en')).toEqual({ lang: 'es', explicit: true });
    expect(chooseLang(undefined, 'en-GB,en;q=0.8')).toEqual({ lang: 'en', explicit: false });
    expect(chooseLang(undefined, 'es-BO')).toEqual({ lang: 'es', explicit: false });
    expect(chooseLang('fr', 'de, en;q=0.5')).toEqual({ lang: 'en', explicit: false });
    expect(chooseLang(['en'], undefined)).toEqual({ lang: 'es', explicit: false });
    expect(chooseLang(undefined, 'fr')).toEqual({ lang: 'es', explicit: false });
    expect(chooseLang(undefined, '*')).toEqual({ lang: 'es', explicit: false });
    expect(chooseLang(undefined, ';;;q=,,,')).toEqual({ lang: 'es', explicit: false });
  });
});

describe('Locale', () => {
  const es = new Locale('es', false, 'America/La_Paz');
  const en = new Locale('en', true, 'America/La_Paz');

  it('writes amounts as people there do, through Intl', () => {
    expect(nbsp(es.money(123450))).toBe('Bs 1.234,50');
    expect(nbsp(en.money(123450))).toBe('Bs 1,234.50');
    expect(nbsp(es.money(5))).toBe('Bs 0,05');
    expect(es.amountInput(2550)).toBe('25,50');
    expect(en.amountInput(10000000)).toBe('100000.00');
  });

  it('reads an amount as typed in each language', () => {
    expect(es.readAmount('25,50')).toBe('25.50');
    expect(es.readAmount('1.234,5')).toBe('1234.5');
    expect(es.readAmount('1.234')).toBe('1234');
    expect(es.readAmount('25.50')).toBe('25.50'); // a dot with two decimals is a decimal point
    expect(en.readAmount('1,234.50')).toBe('1234.50');
    expect(en.readAmount('25,50')).toBe('25,50'); // left for the form's check to refuse
    expect(es.readAmount('1.2.3')).toBe('1.2.3');
  });

  it('says a deadline in words, in the service\'s zone, with the right article', () => {
    const now = new Date('2026-11-24T12:00:00Z'); // 08:00 in La Paz
    expect(es.deadline(new Date('2026-11-24T19:11:00Z'), now)).toBe('antes de las 15:11');
    expect(es.deadline(new Date('2026-11-25T05:05:00Z'), now)).toBe('antes del 25 de noviembre de 2026 a la 01:05');
    expect(en.deadline(new Date('2026-11-24T19:11:00Z'), now)).toBe('by 3:11 PM');
    expect(en.deadline(new Date('2026-11-25T05:05:00Z'), now)).toBe('by November 25, 2026, 1:05 AM');
    // 23:30 UTC is still the 24th in La Paz
    expect(es.deadline(new Date('2026-11-25T02:30:00Z'), now)).toBe('antes de las 22:30');
  });

  it('picks plural forms and escapes everything but Markup', () => {
    expect(es.plural('onboarding.form.errors', 1)).toBe('Corrige el campo marcado abajo.');
    expect(es.plural('onboarding.form.errors', 3)).toBe('Corrige los 3 campos marcados abajo.');
    expect(en.html('onboarding.done.registered', { merchant: '<b>' })).toBe('The registration of &lt;b&gt; is complete.');
    expect(en.html('onboarding.form.fee', { fee: new Markup('<strong>Bs 1</strong>') })).toContain('<strong>Bs 1</strong>');
  });

  it('keeps an explicitly chosen language on links and redirects only', () => {
    expect(en.href('/pay/x')).toBe('/pay/x?lang=en');
    expect(es.href('/pay/x')).toBe('/pay/x');
  });
});

describe('the catalogue in use', () => {
  it('has no key that no page uses', async () => {
    const { readdirSync, readFileSync } = await import('node:fs');
    const path = await import('node:path');
    const files = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? files(path.join(dir, entry.name)) : entry.name.endsWith('.ts') ? [path.join(dir, entry.name)] : []);
    const source = files('src').filter((file) => !/messages-\w+\.ts$/.test(file)).map((file) => readFileSync(file, 'utf8')).join('\n');
    // Keys built from a prefix and a value (`pay.status.${status}`, `onboarding.error.${field}`, …) count
    // as used when the prefix appears in a template; keys built on a base (`${base}.title`, plural forms)
    // when the base (two segments or more) appears as a string.
    const prefixes = [...source.matchAll(/`([a-z_.]+\.)\$\{/g)].map((m) => m[1]!);
    const bases = (key: string) => key.split('.').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('.')).filter((b) => b.includes('.'));
    const unused = Object.keys(en).filter((key) =>
      !source.includes(`'${key}'`) && !bases(key).some((base) => source.includes(`'${base}'`)) && !prefixes.some((prefix) => key.startsWith(prefix)));
    expect(unused).toEqual([]);
  });
});
