// The language of a hosted page and everything written in it: messages from the catalogue of that
// language, and amounts and times through the platform's Intl (`Bs 1.234,50` / `Bs 1,234.50`, times in
// SERVICE_TIMEZONE as a payer reads them, never a zone identifier). The language is `?lang=es|en`,
// then the browser's Accept-Language (negotiated by `negotiator`), then Spanish.
import Negotiator from 'negotiator';
import { escapeHtml } from '../html.ts';
import { en, type MessageKey } from './messages-en.ts';
import { es } from './messages-es.ts';

/** The languages of the hosted pages; the first is the default. */
export const LANGS = ['es', 'en'] as const;
export type Lang = (typeof LANGS)[number];

const CATALOGUES: Record<Lang, Readonly<Record<MessageKey, string>>> = { es, en };
/** The BCP 47 tag of each language: what `<html lang>` says and what Intl formats with. */
const TAGS: Record<Lang, string> = { es: 'es-BO', en: 'en' };
/** Each language named in itself, for the language switch. */
export const LANG_NAMES: Record<Lang, string> = { es: 'Español', en: 'English' };

export type MessageParams = Readonly<Record<string, string | number>>;

/** Markup a caller vouches for: Locale.html() inserts it as is, where any other parameter is escaped. */
export class Markup {
  constructor(readonly html: string) {}
}

function isLang(value: unknown): value is Lang {
  return typeof value === 'string' && (LANGS as readonly string[]).includes(value);
}

/** The page's language: `?lang=` when it names one (explicit: links and forms carry it on), else the browser's. */
export function chooseLang(queryLang: unknown, acceptLanguage: string | undefined): { lang: Lang; explicit: boolean } {
  if (isLang(queryLang)) return { lang: queryLang, explicit: true };
  const preferred = new Negotiator({ headers: { 'accept-language': acceptLanguage ?? '' } }).languages([...LANGS]);
  // An empty or unmatched header negotiates nothing: the default. `*` lists every language, the default first.
  return { lang: isLang(preferred[0]) ? preferred[0] : LANGS[0], explicit: false };
}

const formatters = new Map<string, Intl.NumberFormat | Intl.DateTimeFormat | Intl.PluralRules>();

/** Intl objects are costly to build (tens of µs): one per language, zone and style, kept. */
function cached<T extends Intl.NumberFormat | Intl.DateTimeFormat | Intl.PluralRules>(key: string, make: () => T): T {
  let formatter = formatters.get(key) as T | undefined;
  if (!formatter) {
    formatter = make();
    formatters.set(key, formatter);
  }
  return formatter;
}

/** What the page script needs to write amounts and times exactly as the server does (same Intl options). */
export interface ClientFormats {
  tag: string;
  zone: string;
  money: Intl.NumberFormatOptions;
  dateTime: Intl.DateTimeFormatOptions;
}

const MONEY_OPTIONS: Intl.NumberFormatOptions = { style: 'currency', currency: 'BOB', currencyDisplay: 'narrowSymbol' };

export class Locale {
  readonly tag: string;

  /**
   * @param switchPath where the page's language switch points (the same page, read again in the other
   *   language: a GET that shows the same thing); null when reading the page again would change something
   *   (the onboarding done page shows its key once) and the page has no switch.
   */
  constructor(
    readonly lang: Lang,
    readonly explicit: boolean,
    readonly zone: string,
    readonly switchPath: string | null = null,
    /** The path of PUBLIC_BASE_URL ('' at the root): where the visitor's browser finds the service's paths. */
    readonly pathPrefix = '',
  ) {
    this.tag = TAGS[lang];
  }

  /** The message `key` with its `{placeholders}` filled, as plain text. */
  t(key: MessageKey, params: MessageParams = {}): string {
    return CATALOGUES[this.lang][key].replace(/\{(\w+)\}/g, (whole, name: string) =>
      (name in params ? String(params[name]) : whole));
  }

  /** The message as HTML: its text escaped, each parameter escaped unless it is Markup. */
  html(key: MessageKey, params: Readonly<Record<string, string | number | Markup>> = {}): string {
    return escapeHtml(CATALOGUES[this.lang][key]).replace(/\{(\w+)\}/g, (whole, name: string) => {
      const value = params[name];
      if (value === undefined) return whole;
      return value instanceof Markup ? value.html : escapeHtml(value);
    });
  }

  /** The plural form of `base` (`base.one`, `base.other`, …) for `count`, with `{count}` filled in. */
  plural(base: string, count: number, params: MessageParams = {}): string {
    const rule = this.pluralRules().select(count);
    const key = (`${base}.${rule}` in en ? `${base}.${rule}` : `${base}.other`) as MessageKey;
    return this.t(key, { count: this.integer(count), ...params });
  }

  /** An amount as people here write it: `Bs 1.234,50` (es) or `Bs 1,234.50` (en). */
  money(centavos: number): string {
    return cached(`money:${this.tag}`, () => new Intl.NumberFormat(this.tag, MONEY_OPTIONS)).format(centavos / 100);
  }

  /** An amount without the currency, with its two decimals and no grouping: what a payer types in a form (`25,50`). */
  amountInput(centavos: number): string {
    return cached(`input:${this.tag}`, () => new Intl.NumberFormat(this.tag, { minimumFractionDigits: 2, maximumFractionDigits: 2, useGrouping: false }))
      .format(centavos / 100);
  }

  /**
   * An amount as a payer typed it, in the API's notation (`1.234,50` → `1234.50` in Spanish,
   * `1,234.50` → `1234.50` in English); text in neither shape is returned as it came, for the form's
   * check to refuse. Intl formats but does not parse, hence these two patterns.
   */
  readAmount(typed: string): string {
    const [group, decimal] = this.lang === 'es' ? ['.', ','] : [',', '.'];
    const g = `\\${group}`, d = `\\${decimal}`;
    const grouped = new RegExp(`^[1-9]\\d{0,2}(?:${g}\\d{3})+(?:${d}\\d{1,2})?$`);
    const plain = new RegExp(`^\\d+${d}\\d{1,2}$`);
    if (grouped.test(typed)) return typed.split(group).join('').replace(decimal, '.');
    if (plain.test(typed)) return typed.replace(decimal, '.');
    return typed;
  }

  integer(value: number): string {
    return cached(`int:${this.tag}`, () => new Intl.NumberFormat(this.tag)).format(value);
  }

  /** The time of day in the service's zone: `15:11` (es), `3:11 PM` (en). */
  time(instant: Date): string {
    return this.dateTimeFormat('time', { hour: 'numeric', minute: '2-digit', hourCycle: this.lang === 'es' ? 'h23' : 'h12' }).format(instant);
  }

  /** The day in the service's zone: `24 de noviembre de 2026` / `November 24, 2026`. */
  date(instant: Date): string {
    return this.dateTimeFormat('date', { dateStyle: 'long' }).format(instant);
  }

  /** Day and time in the service's zone: `24 de noviembre de 2026 a las 15:11` / `November 24, 2026 at 3:11 PM`. */
  dateTime(instant: Date): string {
    return this.dateTimeFormat('dateTime', this.dateTimeOptions()).format(instant);
  }

  /**
   * A deadline in the words a payer reads: "antes de las 15:11" when it is today in the service's zone,
   * "antes del 25 de noviembre de 2026 a las 15:11" otherwise.
   */
  deadline(instant: Date, now: Date): string {
    // Minutes are shown, seconds not: a deadline at 15:11:25 is said "before 15:12", never earlier than it is.
    const shown = new Date(Math.ceil(instant.getTime() / 60_000) * 60_000);
    const sameDay = this.date(shown) === this.date(now);
    const base = sameDay ? 'time.deadline.today' : 'time.deadline.other_day';
    return this.plural(base, this.hourOf(shown), { date: this.date(shown), time: this.time(shown) });
  }

  /** The options the page script formats with, so the browser writes what the server would. */
  clientFormats(): ClientFormats {
    return {
      tag: this.tag,
      zone: this.zone,
      money: MONEY_OPTIONS,
      dateTime: { ...this.dateTimeOptions(), timeZone: this.zone },
    };
  }

  /** The messages the page script shows, by key. */
  pick<K extends MessageKey>(keys: readonly K[]): Record<K, string> {
    return Object.fromEntries(keys.map((key) => [key, CATALOGUES[this.lang][key]])) as Record<K, string>;
  }

  /**
   * The service's page at `path` as the visitor's browser reaches it — under the path of PUBLIC_BASE_URL
   * (pathOf) — keeping an explicitly chosen language (links, form actions, redirects); a negotiated one
   * needs nothing. '' (the page itself) stays relative.
   */
  href(path: string): string {
    const reached = this.pathOf(path);
    if (!this.explicit) return reached;
    return `${reached}${reached.includes('?') ? '&' : '?'}lang=${this.lang}`;
  }

  /** A path of the service (`/pay/…`) under the path of PUBLIC_BASE_URL, without the language: a file, a cookie's scope. */
  pathOf(path: string): string {
    return path.startsWith('/') ? `${this.pathPrefix}${path}` : path;
  }

  /** The hour (0–23) of `instant` in the service's zone: Spanish agrees its article with it (la 1:05, las 13:05). */
  private hourOf(instant: Date): number {
    return Number(this.dateTimeFormat('hour', { hour: 'numeric', hourCycle: 'h23' }).format(instant));
  }

  private dateTimeOptions(): Intl.DateTimeFormatOptions {
    return { dateStyle: 'long', timeStyle: 'short', hourCycle: this.lang === 'es' ? 'h23' : 'h12' };
  }

  private pluralRules(): Intl.PluralRules {
    return cached(`plural:${this.tag}`, () => new Intl.PluralRules(this.tag));
  }

  private dateTimeFormat(style: string, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
    return cached(`${style}:${this.tag}:${this.zone}`, () => new Intl.DateTimeFormat(this.tag, { ...options, timeZone: this.zone }));
  }
}
