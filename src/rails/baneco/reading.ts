// Strict reading of what the bank sends: each reader either returns the typed value or throws
// Unreadable naming the field and what it should have held — never the value itself, which may be a
// payer's name, an account or a token. readAnswer turns any such throw into a result, so nothing the
// bank sends can crash a caller.
import { centavos, parseAmount, type Centavos } from '../../money.ts';
import { parseWallClock } from '../../time.ts';

export type Reading<T> = { ok: true; value: T } | { ok: false; problem: string };

/** Thrown by the readers below; readAnswer catches it (and only it is expected). */
export class Unreadable extends Error {
  constructor(readonly problem: string) {
    super(problem);
    this.name = 'Unreadable';
  }
}

/** Runs a reader: its value, or the problem that stopped it (a stack overflow on absurd nesting included). */
export function readAnswer<T>(read: () => T): Reading<T> {
  try {
    return { ok: true, value: read() };
  } catch (error) {
    if (error instanceof Unreadable) return { ok: false, problem: error.problem };
    return { ok: false, problem: error instanceof RangeError ? 'nested too deeply to read' : 'unreadable' };
  }
}

/** The longest body the rail reads: a day of paidQR or account history fits many times over. */
export const MAX_ANSWER_CHARS = 8 * 1024 * 1024;

/** JSON text to a value; malformed, empty or oversized text is a problem, never an exception. */
export function parseJsonText(text: string, maxChars = MAX_ANSWER_CHARS): Reading<unknown> {
  if (text.length > maxChars) return { ok: false, problem: `body longer than ${maxChars} characters` };
  return readAnswer(() => {
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      throw new Unreadable(error instanceof RangeError ? 'JSON nested too deeply' : 'not JSON');
    }
  });
}

export type Fields = Readonly<Record<string, unknown>>;

/** A JSON object (not an array, not null). */
export function object(value: unknown, path: string): Fields {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Unreadable(`${path}: expected an object`);
  return value as Fields;
}

/** The field's own value, never one inherited through a prototype (a `__proto__` key of JSON.parse is an own property). */
export function own(fields: Fields, key: string): unknown {
  return Object.hasOwn(fields, key) ? fields[key] : undefined;
}

const absent = (value: unknown) => value === undefined || value === null;

/** A required JSON array of at most maxItems. */
export function array(fields: Fields, key: string, path: string, maxItems: number): unknown[] {
  const value = own(fields, key);
  if (!Array.isArray(value)) throw new Unreadable(`${path}.${key}: expected an array`);
  if (value.length > maxItems) throw new Unreadable(`${path}.${key}: more than ${maxItems} items`);
  return value;
}

/** An array that may be missing or null (read as empty). */
export function optionalArray(fields: Fields, key: string, path: string, maxItems: number): unknown[] {
  return absent(own(fields, key)) ? [] : array(fields, key, path, maxItems);
}

export interface TextRule {
  maxLength: number;
  /** Tested only once the length is known to be within maxLength. */
  pattern?: RegExp;
  /** What the pattern means, for the problem text. */
  shape?: string;
}

/** A required string within the rule; U+0000 is refused everywhere (no database column takes it). */
export function text(fields: Fields, key: string, path: string, rule: TextRule): string {
  const value = own(fields, key);
  if (typeof value !== 'string') throw new Unreadable(`${path}.${key}: expected a string`);
  if (value.length > rule.maxLength) throw new Unreadable(`${path}.${key}: longer than ${rule.maxLength} characters`);
  if (value.includes('\u0000')) throw new Unreadable(`${path}.${key}: holds U+0000`);
  if (rule.pattern && !rule.pattern.test(value)) throw new Unreadable(`${path}.${key}: expected ${rule.shape ?? 'another form'}`);
  return value;
}

/** Free text the bank may leave out: missing or null reads as ''; anything else must be a string within the rule. */
export function freeText(fields: Fields, key: string, path: string, maxLength: number): string {
  return absent(own(fields, key)) ? '' : text(fields, key, path, { maxLength });
}

/** An identifier: 1 to maxLength printable ASCII characters, no spaces. */
export function identifier(fields: Fields, key: string, path: string, maxLength = 100): string {
  return text(fields, key, path, { maxLength, pattern: /^[\x21-\x7e]+$/, shape: 'an identifier (printable ASCII, no spaces)' });
}

/** A whole JSON number ≥ 0 that JavaScript holds exactly, as its decimal text (ids are never computed with). */
export function wholeNumberText(fields: Fields, key: string, path: string): string {
  const value = own(fields, key);
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new Unreadable(`${path}.${key}: expected a whole number from 0 to 2^53-1`);
  }
  return String(value);
}

/** A JSON integer (any sign) that JavaScript holds exactly. */
export function integer(fields: Fields, key: string, path: string): number {
  const value = own(fields, key);
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new Unreadable(`${path}.${key}: expected an integer`);
  return value;
}

export function boolean(fields: Fields, key: string, path: string): boolean {
  const value = own(fields, key);
  if (typeof value !== 'boolean') throw new Unreadable(`${path}.${key}: expected true or false`);
  return value;
}

/** One of a closed set of strings. */
export function oneOf<const T extends string>(fields: Fields, key: string, path: string, values: readonly T[]): T {
  const value = own(fields, key);
  if (typeof value !== 'string' || !(values as readonly string[]).includes(value)) {
    throw new Unreadable(`${path}.${key}: expected one of ${values.join(', ')}`);
  }
  return value as T;
}

/** Whether the field is present with a non-null value. */
export function has(fields: Fields, key: string): boolean {
  return !absent(own(fields, key));
}

/**
 * An amount: a JSON number with at most two decimals, as whole centavos. No arithmetic touches the
 * float: money.ts reads the number's shortest decimal text (100.5 → "100.5" → 10050), so 100.505 or
 * 0.1 + 0.2's 0.30000000000000004 are refused rather than rounded. `signed`: debits of the account
 * history are negative; the sign is taken off before reading and put back on the whole number.
 */
export function amount(fields: Fields, key: string, path: string, options: { signed: boolean; minCentavos: number }): Centavos {
  const value = own(fields, key);
  if (typeof value !== 'number') throw new Unreadable(`${path}.${key}: expected a JSON number`);
  const negative = value < 0 || Object.is(value, -0);
  if (negative && !options.signed) throw new Unreadable(`${path}.${key}: expected an amount of at least 0`);
  const parsed = parseAmount(negative ? -value : value, { min: 0, max: Number.MAX_SAFE_INTEGER });
  if (!parsed.ok) throw new Unreadable(`${path}.${key}: expected an amount with at most two decimals (${parsed.problem})`);
  const signed = negative && parsed.centavos !== 0 ? centavos(-parsed.centavos) : parsed.centavos;
  if (signed < options.minCentavos) throw new Unreadable(`${path}.${key}: expected an amount of at least ${options.minCentavos} centavos`);
  return signed;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A real calendar date `yyyy-MM-dd`. */
export function isCalendarDate(value: string): boolean {
  const match = DATE.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const probe = new Date(Date.UTC(year, month - 1, day));
  return probe.getUTCFullYear() === year && probe.getUTCMonth() === month - 1 && probe.getUTCDate() === day;
}

/** `yyyy-MM-dd`, a real calendar date. */
export function date(fields: Fields, key: string, path: string): string {
  const value = text(fields, key, path, { maxLength: 10, pattern: DATE, shape: 'a date yyyy-MM-dd' });
  if (!isCalendarDate(value)) throw new Unreadable(`${path}.${key}: expected a real calendar date`);
  return value;
}

/** The date part of `yyyy-MM-ddTHH:mm:ss` (the bank's date-time, whose time is 00:00:00 in its examples), or a bare date. */
export function dateOfDateTime(fields: Fields, key: string, path: string): string {
  const value = text(fields, key, path, {
    maxLength: 19, pattern: /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}:\d{2})?$/, shape: 'a date-time yyyy-MM-ddTHH:mm:ss',
  });
  const day = value.slice(0, 10);
  if (!isCalendarDate(day)) throw new Unreadable(`${path}.${key}: expected a real calendar date`);
  return day;
}

/** `HH:mm:ss`, 24 h. */
export function time(fields: Fields, key: string, path: string): string {
  return text(fields, key, path, { maxLength: 8, pattern: /^(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d$/, shape: 'a time HH:mm:ss' });
}

/** The instant of a wall-clock date and time in `zone` (SERVICE_TIMEZONE). */
export function instantOf(day: string, clock: string, zone: string, path: string): Date {
  const instant = parseWallClock(`${day} ${clock}`, zone);
  if (!instant) throw new Unreadable(`${path}: not a real time in ${zone}`);
  return instant;
}

/**
 * Text the bank wrote for people (a refusal's message, a rejection's reason), made safe to keep and
 * show: control and bidirectional-override characters become spaces, runs of space collapse, and it is
 * cut at maxLength with an ellipsis.
 */
export function cleanBankText(value: string, maxLength = 200): string {
  const cleaned = value.replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/g, ' ').replace(/\s+/g, ' ').trim();
  if (cleaned.length <= maxLength) return cleaned;
  const cut = cleaned.slice(0, maxLength - 1);
  // Never end on half of a surrogate pair.
  return `${/[\ud800-\udbff]$/.test(cut) ? cut.slice(0, -1) : cut}…`;
}
