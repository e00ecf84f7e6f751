// Strict checks of what a client sends, as a bank would make them. A failed check throws a Refusal,
// which the routes turn into `{responseCode ≠ 0, message}`: bad input is refused, never a crash.
//
// The specification names no error codes; these are the simulator's own (documented in its README), so
// a client must treat every code ≠ 0 alike and show the message.
import { decryptField } from './crypto.ts';
import { isIsoDate } from './clock.ts';

export const CODES = {
  invalidRequest: 1,
  authenticationFailed: 2,
  notFound: 3,
  wrongState: 4,
  duplicate: 5,
  account: 6,
  funds: 7,
  token: 8,
  simulated: 99,
} as const;

export class Refusal extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

export function invalid(message: string): Refusal {
  return new Refusal(CODES.invalidRequest, message);
}

/** Lengths the specification does not give; the simulator's choice, generous but finite. */
export const MAX_ID = 100;
export const MAX_TEXT = 255;

export type Body = Record<string, unknown>;

export function asObject(value: unknown, name = 'el cuerpo'): Body {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid(`${name} debe ser un objeto JSON`);
  return value as Body;
}

export function requiredText(body: Body, name: string, max = MAX_TEXT, allowEmpty = false): string {
  const value = body[name];
  if (value === undefined || value === null) throw invalid(`El campo ${name} es obligatorio`);
  if (typeof value !== 'string') throw invalid(`El campo ${name} debe ser texto`);
  if (!allowEmpty && value.trim() === '') throw invalid(`El campo ${name} no puede estar vacío`);
  if (value.length > max) throw invalid(`El campo ${name} admite como máximo ${max} caracteres`);
  return value;
}

/** An optional text: absent or null means not given. */
export function optionalText(body: Body, name: string, max = MAX_TEXT): string | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalid(`El campo ${name} debe ser texto`);
  if (value.length > max) throw invalid(`El campo ${name} admite como máximo ${max} caracteres`);
  return value;
}

export function requiredBoolean(body: Body, name: string): boolean {
  const value = body[name];
  if (value === undefined || value === null) throw invalid(`El campo ${name} es obligatorio`);
  if (typeof value !== 'boolean') throw invalid(`El campo ${name} debe ser true o false`);
  return value;
}

export function requiredInteger(body: Body, name: string, min: number, max: number): number {
  const value = body[name];
  if (value === undefined || value === null) throw invalid(`El campo ${name} es obligatorio`);
  if (typeof value !== 'number' || !Number.isInteger(value)) throw invalid(`El campo ${name} debe ser un número entero`);
  if (value < min || value > max) throw invalid(`El campo ${name} debe estar entre ${min} y ${max}`);
  return value;
}

/** Largest amount accepted in one field: far above any real charge, below float trouble. */
const MAX_AMOUNT = 10_000_000_000;

/** Amount in cents of a positive JSON number with at most two decimals (a text "10.50" is refused: the type is decimal). */
export function amountCents(value: unknown, name: string): number {
  if (value === undefined || value === null) throw invalid(`El campo ${name} es obligatorio`);
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalid(`El campo ${name} debe ser un número decimal`);
  if (value <= 0) throw invalid(`El campo ${name} debe ser mayor a cero`);
  if (value > MAX_AMOUNT) throw invalid(`El campo ${name} excede el máximo permitido`);
  const cents = Math.round(value * 100);
  // 0.1 + 0.2 style noise is far below 1e-6 cents; a third decimal is not.
  if (Math.abs(value * 100 - cents) > 1e-6) throw invalid(`El campo ${name} admite como máximo dos decimales`);
  return cents;
}

export function currency(body: Body, name: string): 'BOB' | 'USD' {
  const value = requiredText(body, name, 3);
  if (value !== 'BOB' && value !== 'USD') throw invalid(`El campo ${name} debe ser BOB o USD`);
  return value;
}

export function requiredDate(body: Body, name: string): string {
  const value = requiredText(body, name, 10);
  if (!isIsoDate(value)) throw invalid(`El campo ${name} debe ser una fecha válida con formato yyyy-MM-dd`);
  return value;
}

/** A field encrypted with the client's AES key: its clear text, or a refusal naming the field. */
export function encrypted(body: Body, name: string, key: string, container = body): string {
  const value = container[name];
  if (value === undefined || value === null) throw invalid(`El campo ${name} es obligatorio`);
  if (typeof value !== 'string') throw invalid(`El campo ${name} debe ser texto cifrado`);
  const plain = decryptField(value, key);
  if (plain === null || plain.trim() === '') throw invalid(`El campo ${name} no pudo ser descifrado con la llave asignada`);
  return plain;
}

/** Cents back to the bank's decimal amount (a JSON number with at most two decimals). */
export function toAmount(cents: number): number {
  return Math.round(cents) / 100;
}
