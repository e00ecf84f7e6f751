// The console's POS terminal on the Banco Económico rail (RAIL=baneco, against the bank simulator): a charge
// is issued by the bank (our QR id as its transactionId, single use, the amount), the QR screen shows the
// bank's image, a double submit calls the bank once, the bank's payment turns the status long poll to PAID,
// and a bank refusal is the keypad's alert with nothing made.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { databaseKinds } from '../helpers/databases.ts';
import { decodeQrImage } from '../qr/qr-helpers.ts';
import { startBankedApp, type BankedApp } from '../bank/helpers.ts';
import { newOwner, type ConsoleBrowser } from './helpers.ts';

describe.each(databaseKinds())('the console\'s POS terminal on the bank\'s rail on %s', (kind) => {
  let s: BankedApp;
  let owner: ConsoleBrowser;
  let businessCode: number;
  beforeAll(async () => {
    s = await startBankedApp(kind);
    businessCode = (await s.t.createMerchant({ name: 'Café del Banco' })).businessCode;
    owner = await newOwner(s.t, businessCode, 'terminal.bank.owner@example.com');
  });
  afterEach(() => s.bank.setKnobs({ faults: { generateQR: null } }));
  afterAll(() => s?.close());

  const bankQrs = () => s.bank.state().qrs as Array<Record<string, any>>;
  const keyOf = (html: string) => /name="idempotency_key" value="([^"]+)"/.exec(html)![1]!;
  const qrCount = async () => (await s.t.db.query<{ n: number }>('select count(*)::int as n from simple_qrs where business_code = $1', [businessCode])).rows[0]!.n;

  it('the bank issues the charge\'s QR once for a double submit; its image is on the screen; its payment ends the long poll PAID', async () => {
    const keypad = await owner.get('/console/terminal');
    const form = { amount: '33.00', description: 'Mesa 4', idempotency_key: keyOf(keypad.text) };
    const before = bankQrs().length;
    const first = await owner.post('/console/terminal', form);
    const second = await owner.post('/console/terminal', form);
    expect(first.status).toBe(303);
    expect(second.location).toBe(first.location);
    expect(bankQrs().length).toBe(before + 1);
    const id = first.location!.split('/').at(-1)!;
    const row = (await s.t.db.query<{ rail: string; rail_reference: string; qr_image: string }>('select rail, rail_reference, qr_image from simple_qrs where id = $1', [id])).rows[0]!;
    expect(row.rail).toBe('baneco');
    const issued = bankQrs().find((qr) => qr.qrId === row.rail_reference)!;
    expect(issued).toMatchObject({ transactionId: id, amount: 33, singleUse: true, modifyAmount: false });

    const screen = await owner.get(first.location!);
    expect(screen.status).toBe(200);
    expect(screen.text).toContain(row.qr_image);
    expect(decodeQrImage(row.qr_image)).toBe(issued.payload);

    const waiting = owner.send('GET', `/console/terminal/qrs/${id}/status?wait=25`, undefined, { accept: 'application/json' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    s.bank.pay(row.rail_reference);
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text)).toMatchObject({ status: 'PAID', amount: '33.00' });
  });

  it('a bank refusal is the keypad\'s alert (502), with nothing made and a new key', async () => {
    s.bank.setKnobs({ faults: { generateQR: { kind: 'refuse', code: 99, message: 'Cuenta bloqueada' } } });
    const keypad = await owner.get('/console/terminal');
    const before = await qrCount();
    const refused = await owner.post('/console/terminal', { amount: '5', description: '', idempotency_key: keyOf(keypad.text) });
    expect(refused.status).toBe(502);
    expect(refused.text).toContain('id="form-alert"');
    expect(keyOf(refused.text)).not.toBe(keyOf(keypad.text));
    expect(await qrCount()).toBe(before);
  });
});
