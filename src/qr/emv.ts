// The EMVCo Merchant-Presented Mode payload of a QR (docs/api-reference.md#emv-payload): TLV fields in ascending tag order,
// names transliterated to ASCII, and a CRC16/CCITT-FALSE over the whole string including "6304".
import { formatCentavos, type Centavos } from '../money.ts';

export interface EmvFields {
  isMultiUse: boolean;
  /** The hosted page URL; only the token goes into tag 26 when the URL is longer than 85 characters. */
  qrUrl: string;
  payToken: string;
  /** Four digits; "5999" when the merchant has none. */
  mcc: string;
  /** Present only for a fixed amount (tag 54). */
  amountCentavos: Centavos | null;
  merchantName: string;
  merchantCity: string;
}

/** Longest qr_url carried whole in the merchant-account template (26): 4 + 10 + 85 = 99, the TLV maximum. */
export const MAX_URL_IN_TEMPLATE = 85;
const NAME_LENGTH = 25;
const CITY_LENGTH = 15;

export function buildEmvPayload(fields: EmvFields): string {
  const account = tlv('00', 'bo.mps') + tlv('01', fields.qrUrl.length > MAX_URL_IN_TEMPLATE ? fields.payToken : fields.qrUrl);
  let payload =
    tlv('00', '01') +
    tlv('01', fields.isMultiUse ? '11' : '12') +
    tlv('26', account) +
    tlv('52', fields.mcc) +
    tlv('53', '068') +
    (fields.amountCentavos === null ? '' : tlv('54', formatCentavos(fields.amountCentavos))) +
    tlv('58', 'BO') +
    tlv('59', toEmvText(fields.merchantName, NAME_LENGTH, 'Merchant')) +
    tlv('60', toEmvText(fields.merchantCity, CITY_LENGTH, 'La Paz')) +
    tlv('62', tlv('05', fields.payToken));
  payload += '6304';
  return payload + crc16CcittFalse(payload);
}

/** One TLV field: two-digit tag, two-digit length, value (at most 99 characters). */
export function tlv(tag: string, value: string): string {
  if (value.length > 99) throw new RangeError(`EMV field ${tag} is ${value.length} characters; at most 99 fit`);
  return tag + String(value.length).padStart(2, '0') + value;
}

/** CRC16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final xor) as 4 uppercase hex digits. */
export function crc16CcittFalse(text: string): string {
  let crc = 0xffff;
  for (let i = 0; i < text.length; i++) {
    crc ^= text.charCodeAt(i) << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

/** Letters without a decomposition into base letter + accent. */
const SPECIAL_LETTERS: Record<string, string> = {
  ß: 'ss', Æ: 'AE', æ: 'ae', Œ: 'OE', œ: 'oe', Ø: 'O', ø: 'o', Đ: 'D', đ: 'd', Ł: 'L', ł: 'l', Þ: 'Th', þ: 'th',
  '¿': '', '¡': '', '‘': "'", '’': "'", '“': '"', '”': '"', '–': '-', '—': '-',
};

/**
 * ASCII text for an EMV name or city: accents removed (`Pérez` → `Perez`, `Ñandú` → `Nandu`), other
 * characters outside printable ASCII dropped, spaces collapsed, cut to `maxLength`; `fallback` when
 * nothing is left.
 */
export function toEmvText(text: string, maxLength: number, fallback: string): string {
  const ascii = [...text.normalize('NFD')]
    .map((char) => SPECIAL_LETTERS[char] ?? char)
    .join('')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\x20-\x7e]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  const cut = ascii.slice(0, maxLength).trimEnd();
  return cut === '' ? fallback : cut;
}

/** Splits a TLV string into its fields (tests and the pay page use it to read a payload back). */
export function parseTlv(text: string): Array<{ tag: string; value: string }> {
  const fields: Array<{ tag: string; value: string }> = [];
  let at = 0;
  while (at < text.length) {
    const tag = text.slice(at, at + 2);
    const length = Number(text.slice(at + 2, at + 4));
    if (!/^\d{2}$/.test(tag) || !Number.isInteger(length) || at + 4 + length > text.length) throw new Error(`malformed TLV at ${at}`);
    fields.push({ tag, value: text.slice(at + 4, at + 4 + length) });
    at += 4 + length;
  }
  return fields;
}
