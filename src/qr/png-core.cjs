// The QR image renderer, in plain CommonJS so the same code runs on the request's thread (through png.ts)
// and in the worker threads of the render pool (render-worker.cjs) without a TypeScript loader there.
// It draws the `qrcode` library's module matrix as a 1-bit grayscale PNG with node:zlib: `qrcode`'s own
// PNG data URL costs ~8 ms here (a search over 8 masks plus an RGBA image); one fixed mask and a 1-bit
// image cost ~1.1 ms and decode the same with any reader (the tests use jsQR).
'use strict';
const QRCode = require('qrcode');
const { crc32, deflateSync } = require('node:zlib');

/** Pixels per module, and the quiet zone around the symbol in modules (ISO/IEC 18004 asks for 4). */
const SCALE = 4;
const QUIET_ZONE = 4;
/** Error correction M (15 %) and one fixed mask: choosing the "best" of 8 masks triples the cost and no reader needs it. */
const QR_OPTIONS = { errorCorrectionLevel: 'M', maskPattern: 2 };
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunk(type, data) {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'ascii');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

/** The PNG bytes of the QR code of `payload`. */
function renderQrPng(payload) {
  const modules = QRCode.create(payload, QR_OPTIONS).modules;
  const size = modules.size;
  const pixels = (size + 2 * QUIET_ZONE) * SCALE;
  const stride = Math.ceil(pixels / 8) + 1; // a leading filter byte (0 = none) per scanline
  const raw = Buffer.alloc(stride * pixels, 0xff);
  // 1 = white, 0 = black: start all white, reset each scanline's filter byte, then clear the dark modules' bits.
  for (let y = 0; y < pixels; y++) raw[y * stride] = 0;
  for (let row = 0; row < size; row++) {
    for (let col = 0; col < size; col++) {
      if (!modules.get(row, col)) continue;
      const x0 = (col + QUIET_ZONE) * SCALE;
      const y0 = (row + QUIET_ZONE) * SCALE;
      for (let dy = 0; dy < SCALE; dy++) {
        const line = (y0 + dy) * stride + 1;
        for (let dx = 0; dx < SCALE; dx++) {
          const x = x0 + dx;
          raw[line + (x >> 3)] &= ~(0x80 >> (x & 7));
        }
      }
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(pixels, 0);
  header.writeUInt32BE(pixels, 4);
  header[8] = 1; // bit depth 1
  header[9] = 0; // grayscale; bytes 10-12: deflate, adaptive filtering, no interlace
  return Buffer.concat([PNG_SIGNATURE, chunk('IHDR', header), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

function renderQrDataUri(payload) {
  return 'data:image/png;base64,' + renderQrPng(payload).toString('base64');
}

module.exports = { renderQrPng, renderQrDataUri };
