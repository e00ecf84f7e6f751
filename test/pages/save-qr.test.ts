// "Guardar QR" over HTTP (docs/qr.md#save-the-qr): the file name, the Content-Disposition of the image's
// download variant against a hostile merchant name, the link on the pay page only while the QR takes
// payments, and on a bank's rail the bank's own image, byte for byte. In Chromium: save-qr.browser.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attachmentDisposition } from '../../src/kernel/content-disposition.ts';
import { centavos } from '../../src/money.ts';
import { qrFileName } from '../../src/qr/pages/qr-file-name.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { startLiveApp } from '../helpers/baneco.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { createQr, decodeQrImage, pay, type Merchant } from '../qr/qr-helpers.ts';

const tokenOf = (qr: { qr_url: string }) => qr.qr_url.split('/pay/')[1]!;
const HOSTILE_NAME = 'Tienda "Doña" Rosa\\\r\nSet-Cookie: a=1; ☕ /../ñandú';
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

describe('the saved QR\'s file name', () => {
  const fixed = { amount_centavos: centavos(2550), modify_amount: false };
  const open = { amount_centavos: null, modify_amount: true };

  it('names merchant and a fixed amount in ASCII, without spaces or path characters', () => {
    expect(qrFileName('Tienda Doña Rosa', fixed)).toBe('QR-Tienda-Dona-Rosa-Bs-25.50.png');
    expect(qrFileName('Tienda Doña Rosa', { amount_centavos: centavos(123_456_00), modify_amount: false })).toBe('QR-Tienda-Dona-Rosa-Bs-123456.00.png');
    expect(qrFileName(HOSTILE_NAME, fixed)).toBe('QR-Tienda-Dona-Rosa-Set-Cookie-a-1-nandu-Bs-25.50.png');
    expect(qrFileName('  ../..\\  ', fixed)).toBe('QR-Bs-25.50.png');
    expect(qrFileName('咖啡店', open)).toBe('QR.png');
    expect(qrFileName('x'.repeat(300), fixed)).toBe(`QR-${'x'.repeat(40)}-Bs-25.50.png`);
  });

  it('leaves out an amount the payer chooses, suggested or not', () => {
    expect(qrFileName('Café Pérez', open)).toBe('QR-Cafe-Perez.png');
    expect(qrFileName('Café Pérez', { amount_centavos: centavos(2000), modify_amount: true })).toBe('QR-Cafe-Perez.png');
  });

  it('makes one Content-Disposition header of any name: quoted ASCII and the RFC 8187 UTF-8 form', () => {
    expect(attachmentDisposition('QR-Cafe-Perez-Bs-25.50.png')).toBe('attachment; filename="QR-Cafe-Perez-Bs-25.50.png"; filename*=UTF-8\'\'QR-Cafe-Perez-Bs-25.50.png');
    expect(attachmentDisposition('a"b\\c\r\nd é\u{1F600}\ud800(1)*\'.png'))
      .toBe('attachment; filename="a_b_c__d ____(1)*\'.png"; filename*=UTF-8\'\'a%22b%5Cc%0D%0Ad%20%C3%A9%F0%9F%98%80%EF%BF%BD%281%29%2A%27.png');
  });
});

describe.each(databaseKinds())('"Guardar QR" over HTTP on %s', (kind) => {
  let t: TestApp;
  let merchant: Merchant;
  beforeAll(async () => {
    t = await startTestApp({ kind });
    merchant = await t.createMerchant({ name: HOSTILE_NAME });
  });
  afterAll(() => t?.close());

  const image = async (app: TestApp, path: string) => {
    const response = await fetch(`${app.baseUrl}${path}`);
    return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
  };

  it('downloads the image the page shows as an attachment whose name no merchant name can break', async () => {
    const qr = await createQr(t, merchant, { amount: 25.5 });
    const saved = await image(t, `/pay/${tokenOf(qr)}/qr.png?download=1`);
    expect(saved.status).toBe(200);
    expect(saved.headers.get('content-type')).toBe('image/png');
    const name = 'QR-Tienda-Dona-Rosa-Set-Cookie-a-1-nandu-Bs-25.50.png';
    expect(saved.headers.get('content-disposition')).toBe(`attachment; filename="${name}"; filename*=UTF-8''${name}`);
    expect(saved.headers.get('set-cookie')).toBeNull();
    expect(saved.headers.get('cache-control')).toBe('no-store');
    expect(saved.headers.get('x-content-type-options')).toBe('nosniff');
    expect(saved.headers.get('referrer-policy')).toBe('no-referrer');
    expect(saved.bytes.subarray(0, 8)).toEqual(PNG_SIGNATURE);
    expect(`data:image/png;base64,${saved.bytes.toString('base64')}`).toBe(qr.qr_image);
    expect(decodeQrImage(qr.qr_image)).toBe(qr.qr_payload);

    // The same name in the page's link; without ?download=1 the same image, shown rather than saved.
    const html = (await t.request('GET', `/pay/${tokenOf(qr)}`)).text;
    expect(html).toContain(`<a class="button-link" id="save-qr" href="/pay/${tokenOf(qr)}/qr.png?download=1" download="${name}" type="image/png"`);
    expect(html).toContain('>Guardar QR</a>');
    expect((await t.request('GET', `/pay/${tokenOf(qr)}?lang=en`)).text).toContain('>Save QR</a>');
    const shown = await image(t, `/pay/${tokenOf(qr)}/qr.png`);
    expect(shown.headers.get('content-disposition')).toBeNull();
    expect(shown.bytes).toEqual(saved.bytes);
  });

  it('names an open-amount multi-use QR by its merchant alone', async () => {
    const qr = await createQr(t, merchant, { is_multi_use: true, modify_amount: true, amount: undefined });
    const saved = await image(t, `/pay/${tokenOf(qr)}/qr.png?download=1`);
    expect(saved.headers.get('content-disposition')).toContain('filename="QR-Tienda-Dona-Rosa-Set-Cookie-a-1-nandu.png"');
  });

  it('shows the link only while the QR takes payments', async () => {
    const qr = await createQr(t, merchant, { amount: 5 });
    const section = async () => /<section class="card" id="pay-section"[^>]*>[^]*?<\/section>/.exec((await t.request('GET', `/pay/${tokenOf(qr)}`)).text)![0];
    expect(await section()).not.toMatch(/id="pay-section"[^>]* hidden/);
    expect(await section()).toContain('id="save-qr"');
    await pay(t, merchant, qr.id);
    expect(await section()).toMatch(/id="pay-section"[^>]* hidden/);
    const canceled = await createQr(t, merchant, { amount: 5 });
    await t.request('POST', `/api/v2/simple-qrs/${canceled.id}/cancel`, { apiKey: merchant.apiKey });
    expect((await t.request('GET', `/pay/${tokenOf(canceled)}`)).text).toMatch(/id="pay-section"[^>]* hidden/);
  });

  it('answers 404 for an unknown token and 422 for another query', async () => {
    const unknown = await t.request('GET', '/pay/AAAAAAAAAAAAAAAAAAAAAA/qr.png?download=1');
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(unknown.headers.get('content-disposition')).toBeNull();
    const qr = await createQr(t, merchant, { amount: 5 });
    expect((await t.request('GET', `/pay/${tokenOf(qr)}/qr.png?download=yes`)).status).toBe(422);
    expect((await t.request('GET', `/pay/${tokenOf(qr)}/qr.png?x=1`)).status).toBe(422);
  });

  it('saves the bank\'s own image on a bank\'s rail', async () => {
    const live = await startLiveApp({ kind, database: t.database });
    try {
      const m = await live.createMerchant({ name: 'Tienda Doña Rosa' });
      const qr = await createQr(live, m, { amount: 25.5 });
      expect(qr.rail).toBe('baneco');
      const saved = await image(live, `/pay/${tokenOf(qr)}/qr.png?download=1`);
      expect(saved.status).toBe(200);
      expect(saved.headers.get('content-disposition')).toContain('filename="QR-Tienda-Dona-Rosa-Bs-25.50.png"');
      expect(`data:image/png;base64,${saved.bytes.toString('base64')}`).toBe(qr.qr_image);
      expect((await live.request('GET', `/pay/${tokenOf(qr)}`)).text).toContain(`src="${qr.qr_image}"`);
    } finally {
      await live.close();
    }
  });
});
