// decodeBankQrImage (src/qr/bank-image.ts): the text a bank's PNG encodes, or null — never a throw. Clean
// renderings are read the short way (the symbol sampled to one pixel a module for jsQR); whatever that
// cannot read goes the plain way (pngjs, jsQR over every pixel, both polarities), so images the short way
// declines still decode, and hostile files answer null.
import { crc32, deflateSync } from 'node:zlib';
import { PNG } from 'pngjs';
import QRCode from 'qrcode';
import { describe, expect, it } from 'vitest';
import { decodeBankQrImage, decodeRedrawn } from '../../src/qr/bank-image.ts';
import { renderQrPng } from '../../src/qr/png.ts';
import { emvPayload, qrPngBase64 } from '../../simulators/baneco/emv.ts';

const PAYLOAD = emvPayload({ qrId: '21061401016000000003', currency: 'BOB', amount: 150.5, dueDate: '2026-12-31', merchantName: 'COMERCIO DEMO', description: 'Order 42' });
const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const base64 = (png: Buffer) => png.toString('base64');
const qrcodePng = (text: string, options: QRCode.QRCodeToBufferOptions = {}) =>
  QRCode.toBuffer(text, { type: 'png', errorCorrectionLevel: 'M', margin: 4, width: 300, ...options });

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const out = Buffer.alloc(4 + head.length + 4);
  out.writeUInt32BE(data.length, 0);
  head.copy(out, 4);
  out.writeUInt32BE(crc32(head), 4 + head.length);
  return out;
}

/** A PNG whose header says `width` × `height` (8-bit RGBA) over image data `raw` (filter bytes included). */
function pngOf(width: number, height: number, raw: Buffer): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8;
  header[9] = 6;
  return Buffer.concat([SIGNATURE, chunk('IHDR', header), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

/** `png` with `paint` applied to its RGBA pixels, written again by pngjs. */
function repainted(png: Buffer, paint: (image: PNG) => void): Buffer {
  const image = PNG.sync.read(png);
  paint(image);
  return PNG.sync.write(image);
}

describe('decodeBankQrImage', () => {
  it('decodes the bank simulator\'s image, qrcode\'s own PNG of it, and the service\'s own 1-bit rendering', async () => {
    expect(decodeBankQrImage(await qrPngBase64(PAYLOAD))).toBe(PAYLOAD);
    expect(decodeBankQrImage(base64(await qrcodePng(PAYLOAD)))).toBe(PAYLOAD);
    expect(decodeBankQrImage(base64(await qrcodePng(PAYLOAD, { rendererOpts: { colorType: 0 } } as QRCode.QRCodeToBufferOptions)))).toBe(PAYLOAD); // 8-bit grey
    expect(decodeBankQrImage(base64(renderQrPng(PAYLOAD)))).toBe(PAYLOAD);
    // All four the short way: the speed of QR creation through a bank rests on it (bench/bank.ts).
    expect(decodeRedrawn(Buffer.from(await qrPngBase64(PAYLOAD), 'base64'))).toBe(PAYLOAD);
    expect(decodeRedrawn(await qrcodePng(PAYLOAD))).toBe(PAYLOAD);
    expect(decodeRedrawn(await qrcodePng(PAYLOAD, { rendererOpts: { colorType: 0 } } as QRCode.QRCodeToBufferOptions))).toBe(PAYLOAD);
    expect(decodeRedrawn(renderQrPng(PAYLOAD))).toBe(PAYLOAD);
  });

  it('decodes symbols of every size the bank may draw, at scales the short way takes and declines', async () => {
    for (const length of [1, 20, 100, 184, 300, 600]) {
      const text = Array.from({ length }, (_, i) => String.fromCharCode(33 + ((i * 7 + length) % 90))).join('');
      for (const width of [300, 450]) {
        const png = await qrcodePng(text, { width });
        expect(decodeBankQrImage(base64(png)), `${length} characters, ${width} px`).toBe(text);
        // The short way takes modules of 3 pixels and more (600 characters in 300 px: 2.97).
        const modules = QRCode.create(text, { errorCorrectionLevel: 'M' }).modules.size;
        if (width / (modules + 8) >= 3) expect(decodeRedrawn(png), `${length} characters, ${width} px, the short way`).toBe(text);
      }
    }
    // Under 3 pixels a module: left to the plain way, which reads it as before.
    const small = 'A'.repeat(120);
    const png = await qrcodePng(small, { width: 100, margin: 1, errorCorrectionLevel: 'L' });
    expect(decodeRedrawn(png)).toBeUndefined();
    expect(decodeBankQrImage(base64(png))).toBe(small);
  });

  it('decodes what the short way declines: light modules on dark, a mark beside the symbol', async () => {
    // The short way again first, so that a later call cannot inherit its options (jsQR keeps a call's options).
    expect(decodeBankQrImage(await qrPngBase64(PAYLOAD))).toBe(PAYLOAD);
    const inverted = await qrcodePng(PAYLOAD, { color: { dark: '#ffffffff', light: '#000000ff' } });
    expect(decodeRedrawn(inverted)).toBeUndefined();
    expect(decodeBankQrImage(base64(inverted))).toBe(PAYLOAD);
    const marked = repainted(await qrcodePng(PAYLOAD), (image) => {
      // A dark bar in the bottom margin, as a caption would be: the dark pixels' box is no longer the symbol.
      for (let y = 285; y < 290; y++) for (let x = 40; x < 260; x++) image.data.fill(0, (y * image.width + x) * 4, (y * image.width + x) * 4 + 3);
    });
    expect(decodeRedrawn(marked)).toBeUndefined();
    expect(decodeBankQrImage(base64(marked))).toBe(PAYLOAD);
  });

  it('answers null for an image without a QR symbol: white, black, noise, a lone square', () => {
    const blank = (byte: number) => {
      const raw = Buffer.alloc((1 + 64 * 4) * 64, byte);
      for (let y = 0; y < 64; y++) raw[y * (1 + 64 * 4)] = 0;
      return base64(pngOf(64, 64, raw));
    };
    expect(decodeBankQrImage(blank(255))).toBeNull();
    expect(decodeBankQrImage(blank(0))).toBeNull();
    let state = 1;
    const noise = Buffer.alloc((1 + 120 * 4) * 120);
    for (let i = 0; i < noise.length; i++) noise[i] = i % (1 + 120 * 4) === 0 ? 0 : (state = (state * 1103515245 + 12345) & 0x7fffffff) >> 16;
    expect(decodeBankQrImage(base64(pngOf(120, 120, noise)))).toBeNull();
    const square = new PNG({ width: 200, height: 200 });
    square.data.fill(255);
    for (let y = 50; y < 150; y++) for (let x = 50; x < 150; x++) square.data.fill(0, (y * 200 + x) * 4, (y * 200 + x) * 4 + 3);
    expect(decodeBankQrImage(base64(PNG.sync.write(square)))).toBeNull();
  });

  it('answers null for what is not a PNG, a damaged one, or one far too large, without throwing', async () => {
    const good = await qrcodePng(PAYLOAD);
    expect(decodeBankQrImage('')).toBeNull();
    expect(decodeBankQrImage('not base64 at all!')).toBeNull();
    expect(decodeBankQrImage(base64(Buffer.from('GIF89a, not a PNG, long enough to have a header')))).toBeNull();
    expect(decodeBankQrImage(base64(good.subarray(0, good.length / 2)))).toBeNull(); // cut short
    const damaged = Buffer.from(good);
    damaged[damaged.length - 30] = damaged[damaged.length - 30]! ^ 0xff; // inside the image data: its CRC fails
    expect(decodeBankQrImage(base64(damaged))).toBeNull();
    // A header of 100 000 × 100 000 pixels: refused from the header, nothing inflated.
    const huge = Buffer.from(good);
    huge.writeUInt32BE(100_000, 16);
    huge.writeUInt32BE(100_000, 20);
    huge.writeUInt32BE(crc32(huge.subarray(12, 29)), 29);
    expect(decodeBankQrImage(base64(huge))).toBeNull();
    // 190 kB that inflate to 200 MB behind a header of 100 × 100: stopped at the image's size.
    const started = performance.now();
    expect(decodeBankQrImage(base64(pngOf(100, 100, Buffer.alloc(200_000_000))))).toBeNull();
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('answers null for a symbol whose text it does not keep: empty, or holding a NUL', async () => {
    expect(decodeBankQrImage(base64(await qrcodePng([{ data: Buffer.from('a\u0000b'), mode: 'byte' }] as unknown as string)))).toBeNull();
  });
});
