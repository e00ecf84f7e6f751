// What the QR image shows. The specification shows only a PNG, not its content, so the simulator draws
// a plausible EMVCo merchant-presented payload (tag-length-value fields, CRC-16 last) carrying the
// qrId and the amount. It is NOT the real Bolivian interbank format: a client must not parse it for
// anything but display (the service only shows the image and keeps the decoded text).
import QRCode from 'qrcode';

/** One EMV field: two-digit tag, two-digit length, value (at most 99 characters). */
function field(tag: string, value: string): string {
  const clipped = value.slice(0, 99);
  return `${tag}${String(clipped.length).padStart(2, '0')}${clipped}`;
}

/** CRC-16/CCITT-FALSE (polynomial 0x1021, start 0xFFFF), as EMV QR codes use for tag 63. */
export function crc16(text: string): string {
  let crc = 0xffff;
  for (const byte of Buffer.from(text, 'utf8')) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

export interface QrContent {
  qrId: string;
  currency: 'BOB' | 'USD';
  amount: number;
  dueDate: string;
  merchantName: string;
  description: string;
}

/** The text encoded in a QR's image. */
export function emvPayload(qr: QrContent): string {
  const account = field('00', 'BO.COM.BANECO.QRSIMPLE') + field('01', qr.qrId) + field('02', qr.dueDate.replaceAll('-', ''));
  const body =
    field('00', '01') + // payload format indicator
    field('01', '12') + // point of initiation: dynamic (one charge)
    field('26', account) +
    field('52', '0000') + // merchant category: unknown to the bank's spec
    field('53', qr.currency === 'BOB' ? '068' : '840') + // ISO 4217 numeric
    field('54', qr.amount.toFixed(2)) +
    field('58', 'BO') +
    field('59', ascii(qr.merchantName).slice(0, 25) || 'COMERCIO') +
    field('60', 'LA PAZ') +
    field('62', field('05', qr.qrId) + (qr.description ? field('08', ascii(qr.description).slice(0, 25)) : ''));
  const withCrcTag = `${body}6304`;
  return withCrcTag + crc16(withCrcTag);
}

/** EMV fields are meant for plain characters: accents dropped, anything else replaced. */
function ascii(text: string): string {
  return text.normalize('NFD').replace(/[\u0300-\u036f]/g, '').replace(/[^\x20-\x7e]/g, '?');
}

/** The PNG of a QR code encoding `text`, base64 without a data: prefix, as the bank's `qrImage`. */
export async function qrPngBase64(text: string): Promise<string> {
  const png = await QRCode.toBuffer(text, { type: 'png', errorCorrectionLevel: 'M', margin: 4, width: 300 });
  return png.toString('base64');
}
