// A bank's QR image (docs/rails.md, "Pay-in through a bank"): kept unchanged as the QR's qr_image, and
// decoded once into the text it encodes for qr_payload — or null when it cannot be (not a PNG, no QR
// symbol found, too large to be one). pngjs reads the PNG, jsQR finds and reads the symbol.
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';

// jsqr is CommonJS with an ES-style default export: depending on the loader the function is the module or its `.default`.
type JsQr = typeof import('jsqr').default;
const jsQR: JsQr = ((jsQRModule as unknown as { default?: JsQr }).default ?? jsQRModule) as JsQr;

const DATA_URI_PREFIX = 'data:image/png;base64,';
/** A QR image has a few hundred pixels a side; anything far larger is not worth decoding. */
const MAX_SIDE = 4_000;
/** The longest payload kept (an EMV payload is at most a few hundred characters). */
const MAX_PAYLOAD = 2_000;

/** The bank's base64 PNG as the QR's qr_image. */
export function bankImageDataUri(pngBase64: string): string {
  return DATA_URI_PREFIX + pngBase64;
}

/** The text a bank's PNG (base64) encodes, or null. Never throws. */
export function decodeBankQrImage(pngBase64: string): string | null {
  try {
    const bytes = Buffer.from(pngBase64, 'base64');
    // The size from the IHDR chunk (bytes 16–23) before anything is inflated: a small file may decode to
    // gigabytes of pixels.
    if (bytes.length < 24 || bytes.readUInt32BE(16) > MAX_SIDE || bytes.readUInt32BE(20) > MAX_SIDE) return null;
    const png = PNG.sync.read(bytes);
    const symbol = jsQR(new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length), png.width, png.height);
    if (!symbol || symbol.data === '' || symbol.data.length > MAX_PAYLOAD || symbol.data.includes('\u0000')) return null;
    return symbol.data;
  } catch {
    return null;
  }
}
