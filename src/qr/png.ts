// The QR image: the `qrcode` library's module matrix drawn as a 1-bit grayscale PNG with node:zlib.
// `qrcode`'s own PNG data URL costs ~8 ms here (mask search over 8 patterns plus an RGBA PNG); a fixed
// mask and a 1-bit image cost ~0.7 ms and decode the same with any reader (the test uses jsQR).
import QRCode from 'qrcode';
import { crc32, deflateSync } from 'node:zlib';

/** Pixels per module and the quiet zone around the symbol, in modules (ISO 18004 asks for 4). */
const SCALE = 4;
const QUIET_ZONE = 4;
/** Error correction M (15%) and one fixed mask: choosing the "best" of 8 masks triples the cost and no reader needs it. */
const QR_OPTIONS = { errorCorrectionLevel: 'M', maskPattern: 2 } as const;

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** `data:image/png;base64,…` of the QR code of `payload`. */
export function renderQrDataUri(payload: string): string {
  return `data:image/png;base64,${renderQrPng(payload).toString('base64')}`;
}

export function renderQrPng(payload: string): Buffer {
  const { modules } = QRCode.create(payload, QR_OPTIONS);
  const size = modules.size;
  const pixels = (size + 2 * QUIET_ZONE) * SCALE;
  const rowBytes = Math.ceil(pixels / 8);
  const stride = rowBytes + 1; // leading filter byte (0 = none) per scanline
  const raw = Buffer.alloc(stride * pixels, 0);
  // 1 = white, 0 = black in 1-bit grayscale: start all white, then clear the dark modules' bits.
  for (let y = 0; y < pixels; y++) raw.fill(0xff, y * stride + 1, (y + 1) * stride);
  for (let row = 0; row < size; row++) {
    for (let col = 0; col < size; col++) {
      if (!modules.get(row, col)) continue;
      const x0 = (col + QUIET_ZONE) * SCALE;
      const y0 = (row + QUIET_ZONE) * SCALE;
      for (let dy = 0; dy < SCALE; dy++) {
        const line = (y0 + dy) * stride + 1;
        for (let dx = 0; dx < SCALE; dx++) {
          const x = x0 + dx;
          raw[line + (x >> 3)]! &= ~(0x80 >> (x & 7));
        }
      }
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(pixels, 0);
  header.writeUInt32BE(pixels, 4);
  header[8] = 1; // bit depth
  header[9] = 0; // grayscale
  header[10] = 0; // deflate
  header[11] = 0; // adaptive filtering
  header[12] = 0; // no interlace
  return Buffer.concat([PNG_SIGNATURE, chunk('IHDR', header), chunk('IDAT', deflateSync(raw, { level: 6 })), chunk('IEND', Buffer.alloc(0))]);
}

function chunk(type: string, data: Buffer): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'ascii');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}
