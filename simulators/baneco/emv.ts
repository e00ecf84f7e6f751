// What the QR image shows. The specification shows only a PNG, not its content, so the simulator draws
// a plausible EMVCo merchant-presented payload (tag-length-value fields, CRC-16 last) carrying the
// qrId and the amount. It is NOT the real Bolivian interbank format: a client must not parse it for
// anything but display (the service only shows the image and keeps the decoded text).
import { constants, crc32, deflateSync } from 'node:zlib';
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

/** The bank's image: 300 × 300 pixels, a quiet zone of 4 modules, error correction M, mask pattern 2. */
const IMAGE_WIDTH = 300;
const MARGIN = 4;
const MASK = 2;
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function pngChunk(type: string, data: Buffer): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

/**
 * The PNG of a QR code encoding `text`, base64 without a data: prefix, as the bank's `qrImage`: the pixels
 * of `qrcode`'s own PNG with one fixed mask (QRCode.toBuffer with width 300, margin 4, level M, mask 2 —
 * the same symbol, segments and 300 × 300 8-bit RGBA image), drawn fresh for every QR. `qrcode`'s own way
 * cost ~9 ms a QR here, so the simulator could not issue more than ~110 QRs/s on a core and a benchmark of
 * QR creation through it (bench/bank.ts), sharing the machine's two cores, measured the simulator: pngjs
 * tries all five PNG filters on every row and deflates at level 9, and `qrcode` scores all eight masks to
 * keep the best (~0.7 ms; any mask is a valid symbol, read from its format bits, and the service's own
 * renderer, src/qr/png-core.cjs, fixes one too). Here a row that repeats the one above is filtered "Up"
 * (all zeros), any other "Sub" (zeros but where a pixel differs from its left neighbour), and node:zlib's
 * run-length strategy packs those zeros: ~0.4 ms a QR in all, for a file of about 3.6 kB with the
 * simulator's payloads (qrcode's: 3.5 kB). What a real bank's renderer does is its own business.
 */
export async function qrPngBase64(text: string): Promise<string> {
  const modules = QRCode.create(text, { errorCorrectionLevel: 'M', maskPattern: MASK }).modules;
  const size = modules.size;
  // As qrcode's renderer/utils.js (getScale, qrToImageData): a fractional scale, each pixel the colour of
  // the module under it, light in the margin.
  const scale = IMAGE_WIDTH / (size + MARGIN * 2);
  const side = Math.floor((size + MARGIN * 2) * scale);
  const margin = MARGIN * scale;
  const moduleAt = (pixel: number) => (pixel >= margin && pixel < side - margin ? Math.floor((pixel - margin) / scale) : -1);
  const columns = Int32Array.from({ length: side }, (_, x) => moduleAt(x));
  const stride = side * 4 + 1; // the filter byte, then RGBA
  const raw = Buffer.alloc(stride * side); // zeros: an "Up" row that repeats the one above is done
  let previousRow = -2;
  for (let y = 0; y < side; y++) {
    const line = y * stride;
    const row = moduleAt(y);
    if (row === previousRow) {
      raw[line] = 2; // Up
      continue;
    }
    previousRow = row;
    raw[line] = 1; // Sub: the first pixel as it is, then each channel's difference to the pixel on the left
    let wasDark = false;
    for (let x = 0; x < side; x++) {
      const dark = row >= 0 && columns[x]! >= 0 && modules.data[row * size + columns[x]!] === 1;
      const at = line + 1 + x * 4;
      if (x === 0) {
        raw.fill(dark ? 0 : 255, at, at + 3);
        raw[at + 3] = 255;
      } else if (dark !== wasDark) {
        raw.fill(dark ? 1 : 255, at, at + 3); // 0 − 255 and 255 − 0, modulo 256; alpha stays 255
      }
      wasDark = dark;
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header[8] = 8; // bit depth
  header[9] = 6; // RGBA, as qrcode writes it; bytes 10–12: deflate, adaptive filtering, no interlace
  const png = Buffer.concat([PNG_SIGNATURE, pngChunk('IHDR', header), pngChunk('IDAT', deflateSync(raw, { strategy: constants.Z_RLE })), pngChunk('IEND', Buffer.alloc(0))]);
  return png.toString('base64');
}
