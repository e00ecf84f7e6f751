// decodeBankQrImage (src/qr/bank-image.ts): the text a bank's PNG encodes, or null — never a throw. A clean
// rendering is read the pure way (its module grid from the symbol's extent, ZXing's decoder on the modules),
// dark on light or light on dark; what that cannot read goes to ZXing's ordinary reader (finder-pattern
// search), so images the pure way declines still decode, and hostile files answer null. Every read is
// compared with the text the image was made of, character for character.
import { crc32, deflateSync } from 'node:zlib';
import { PNG } from 'pngjs';
import QRCode from 'qrcode';
import { describe, expect, it } from 'vitest';
import { decodeBankQrImage, decodePure } from '../../src/qr/bank-image.ts';
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
    // All four the pure way: the speed of QR creation through a bank rests on it (bench/bank.ts, bench/qr-decode.ts).
    expect(decodePure(Buffer.from(await qrPngBase64(PAYLOAD), 'base64'))).toBe(PAYLOAD);
    expect(decodePure(await qrcodePng(PAYLOAD))).toBe(PAYLOAD);
    expect(decodePure(await qrcodePng(PAYLOAD, { rendererOpts: { colorType: 0 } } as QRCode.QRCodeToBufferOptions))).toBe(PAYLOAD);
    expect(decodePure(renderQrPng(PAYLOAD))).toBe(PAYLOAD);
  });

  it('reads every symbol size the simulator draws the pure way, at its fractional scales (5.2–6.5 pixels a module)', async () => {
    // ZXing's own pure mode (PURE_BARCODE) counts the modules from the finder's diagonal and read none of the
    // 49-module images; the count from the symbol's width must read them all.
    const sizes = new Set<number>();
    for (let n = 0; n < 40; n++) {
      const payload = emvPayload({ qrId: String(21061401016000000003n + BigInt(n)), currency: n % 2 === 0 ? 'BOB' : 'USD', amount: 1 + n * 37.13, dueDate: '2026-12-31', merchantName: `COMERCIO ${'X'.repeat(n % 25)}`, description: `Order ${'Y'.repeat(n)}` });
      sizes.add(QRCode.create(payload, { errorCorrectionLevel: 'M' }).modules.size);
      const png = await qrPngBase64(payload);
      expect(decodePure(Buffer.from(png, 'base64')), payload).toBe(payload);
      expect(decodeBankQrImage(png), payload).toBe(payload);
    }
    expect([...sizes].sort()).toEqual([41, 45, 49]);
  });

  it('gives back the bank\'s UTF-8 text exactly: accents, eñe, a character outside the BMP', async () => {
    // The simulator writes ASCII only; a bank may not. qrcode encodes a string as UTF-8 bytes, as a bank would.
    const text = PAYLOAD.replace('COMERCIO DEMO', 'CAFÉ ÑANDÚ').replace('Order 42', 'Pedido nº 7 😀');
    expect(text).not.toBe(PAYLOAD);
    const decoded = decodeBankQrImage(base64(await qrcodePng(text)));
    expect(decoded).toBe(text);
    expect(Buffer.from(decoded!, 'utf8').equals(Buffer.from(text, 'utf8'))).toBe(true);
    // Bytes that are not UTF-8 (Latin-1 "CAFÉ") are still read as UTF-8, as the bank's text is specified:
    // ZXing's own guess from the bytes would make them ISO-8859-1 here (or Shift_JIS elsewhere).
    const latin1 = await qrcodePng([{ data: Buffer.from('CAFÉ', 'latin1'), mode: 'byte' }] as unknown as string);
    expect(decodeBankQrImage(base64(latin1))).toBe('CAF\ufffd');
  });

  it('decodes symbols of every size the bank may draw, whole and fractional scales, the pure way', async () => {
    for (const length of [1, 20, 100, 184, 300, 600]) {
      const text = Array.from({ length }, (_, i) => String.fromCharCode(33 + ((i * 7 + length) % 90))).join('');
      for (const width of [300, 450]) {
        const png = await qrcodePng(text, { width });
        expect(decodeBankQrImage(base64(png)), `${length} characters, ${width} px`).toBe(text);
        expect(decodePure(png), `${length} characters, ${width} px, the pure way`).toBe(text);
      }
    }
    // Whole scales: qrcode's `scale` (no width), 2 to 5 pixels a module.
    for (const scale of [2, 3, 5]) expect(decodePure(await qrcodePng(PAYLOAD, { width: undefined, scale } as QRCode.QRCodeToBufferOptions)), `scale ${scale}`).toBe(PAYLOAD);
  });

  it('leaves to ZXing\'s ordinary reader what the pure way declines: modules under two pixels', async () => {
    const text = Array.from({ length: 600 }, (_, i) => String.fromCharCode(33 + ((i * 7 + 600) % 90))).join('');
    const png = await qrcodePng(text, { width: 200 }); // 93 modules and the margin in 200 px: 1.98 a module
    expect(decodePure(png)).toBeUndefined();
    expect(decodeBankQrImage(base64(png))).toBe(text);
  });

  it('decodes light modules on dark and a symbol with a caption under it, the pure way', async () => {
    const inverted = await qrcodePng(PAYLOAD, { color: { dark: '#ffffffff', light: '#000000ff' } });
    expect(decodePure(inverted)).toBe(PAYLOAD);
    expect(decodeBankQrImage(base64(inverted))).toBe(PAYLOAD);
    const marked = repainted(await qrcodePng(PAYLOAD), (image) => {
      // A dark bar in the bottom margin, as a caption would be: the dark pixels' box is no longer the symbol.
      for (let y = 285; y < 290; y++) for (let x = 40; x < 260; x++) image.data.fill(0, (y * image.width + x) * 4, (y * image.width + x) * 4 + 3);
    });
    expect(decodePure(marked)).toBe(PAYLOAD);
    expect(decodeBankQrImage(base64(marked))).toBe(PAYLOAD);
  });

  it('reads a PNG of a kind png-read.ts leaves to pngjs (16 bits a sample)', async () => {
    const image = PNG.sync.read(await qrcodePng(PAYLOAD));
    const deep = new PNG({ width: image.width, height: image.height, bitDepth: 16 });
    const samples = new Uint16Array(image.data.length);
    for (let i = 0; i < samples.length; i++) samples[i] = image.data[i]! * 257;
    deep.data = Buffer.from(samples.buffer);
    const png = PNG.sync.write(deep, { bitDepth: 16 });
    expect(png[24]).toBe(16); // the IHDR's bit depth
    expect(decodePure(png)).toBeUndefined(); // png-read.ts does not read it
    expect(decodeBankQrImage(base64(png))).toBe(PAYLOAD);
  });

  it('never answers another text for a damaged symbol: a module flipped is corrected, too many are refused', async () => {
    const image = PNG.sync.read(await qrcodePng(PAYLOAD));
    const modules = QRCode.create(PAYLOAD, { errorCorrectionLevel: 'M' }).modules.size;
    const scale = 300 / (modules + 8);
    /** `png` with the modules at (column, row) painted the other colour. */
    const flipped = (cells: Array<[number, number]>) => repainted(PNG.sync.write(image), (copy) => {
      for (const [column, row] of cells) {
        for (let y = Math.ceil((row + 4) * scale); y < Math.floor((row + 5) * scale); y++) {
          for (let x = Math.ceil((column + 4) * scale); x < Math.floor((column + 5) * scale); x++) {
            const at = (y * copy.width + x) * 4;
            copy.data.fill(copy.data[at]! < 128 ? 255 : 0, at, at + 3);
          }
        }
      }
    });
    // Modules of the data region, away from the finder, timing and alignment patterns.
    expect(decodePure(flipped([[20, 12], [25, 14]]))).toBe(PAYLOAD);
    // A third of the data region (every third module, diagonally): far past what level M corrects.
    const many: Array<[number, number]> = [];
    for (let row = 9; row < modules - 9; row++) for (let column = 9; column < modules - 9; column++) if ((row + column) % 3 === 0) many.push([column, row]);
    expect(decodeBankQrImage(base64(flipped(many)))).toBeNull();
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
