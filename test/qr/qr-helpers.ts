// Helpers of the QR tests: create QRs and pay them through HTTP, and read a QR image back with
// independent decoders (pngjs for the PNG, jsQR for the symbol).
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';
import type { TestApp } from '../helpers/app.ts';

// jsqr is CommonJS with an ES-style default export: depending on the loader the function is the module or its `.default`.
type JsQr = typeof import('jsqr').default;
const jsQR: JsQr = ((jsQRModule as unknown as { default?: JsQr }).default ?? jsQRModule) as JsQr;

export interface Merchant {
  businessCode: number;
  apiKey: string;
}

export async function createQr(t: TestApp, merchant: Merchant, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const response = await t.request('POST', '/api/v2/simple-qrs', {
    apiKey: merchant.apiKey,
    body: { business_code: merchant.businessCode, amount: 150.5, ...body },
    headers,
  });
  if (response.status !== 201) throw new Error(`creating a QR answered ${response.status}: ${response.text}`);
  return response.body;
}

export function pay(t: TestApp, merchant: Merchant, qrId: string, body: Record<string, unknown> = {}) {
  return t.request('POST', `/api/v2/sandbox/simple-qrs/${qrId}/payments`, { apiKey: merchant.apiKey, body });
}

/** The text encoded in a `data:image/png;base64,…` QR image. */
export function decodeQrImage(dataUri: string): string | null {
  const prefix = 'data:image/png;base64,';
  if (!dataUri.startsWith(prefix)) throw new Error('not a PNG data URI');
  const png = PNG.sync.read(Buffer.from(dataUri.slice(prefix.length), 'base64'));
  const result = jsQR(new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length), png.width, png.height);
  return result ? result.data : null;
}
