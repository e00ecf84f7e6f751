// The console's home over HTTP (docs/console.md#home): an owner's day at a glance — collected, fees, net,
// payouts, the balance — is the statement's day and the balance the API answers, in the page's language;
// a cashier's home shows no money of the business; sections are listed by role. On PGlite, and on
// PostgreSQL when TEST_DATABASE_URL is set.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { createQr, pay } from '../qr/qr-helpers.ts';
import { ConsoleBrowser, newCashier, newOwner } from './helpers.ts';

const PAYER = { source_bank: 'Banco Unión', account_number: '10000123454321', account_titular: 'Ana Pérez' };
const DESTINATION = { type: 'bank_account', bank_code: 1014, account_number: '20150123455678', account_titular: 'Juan Pérez' };

describe.each(databaseKinds())('the console\'s home on %s', (kind) => {
  let t: TestApp;
  let merchant: { businessCode: number; apiKey: string; keyPrefix: string };
  let owner: ConsoleBrowser;
  let cashier: ConsoleBrowser;
  beforeAll(async () => {
    t = await startTestApp({ kind });
    t.clock.set('2026-11-18T15:00:00.000Z'); // 11:00 in La Paz
    merchant = await t.createMerchant({ name: 'Almacén Glance', ach_enabled: true });
    const plan = await t.request('PATCH', `/admin/v1/merchants/${merchant.businessCode}`, { body: { pricing: { qr_percent: 1.5, qr_fixed: 0.3, transfer_fixed: 1.5 } } });
    expect(plan.status).toBe(200);
    owner = await newOwner(t, merchant.businessCode, 'glance.owner@example.com');
    cashier = (await newCashier(owner, t, 'glance.cashier@example.com')).browser;
  });
  afterAll(() => t?.close());

  /** The figure `name` of the glance, as the page shows it. */
  const figure = (html: string, name: string) => {
    const match = new RegExp(`data-figure="${name}"><dt>[^<]*</dt><dd>([^<]*)(?:<span class="hint">([^<]*)</span>)?</dd>`).exec(html);
    return match ? { amount: match[1]!.replace(/\u00a0/g, ' '), count: match[2] ?? null } : null;
  };

  it('shows an owner the day: two payments with their fees, a transfer with its fee, the net and the balance', async () => {
    const empty = await owner.get('/console');
    expect(figure(empty.text, 'collected')).toEqual({ amount: 'Bs 0,00', count: '0 hoy' });

    for (const amount of [100, 50]) {
      const qr = await createQr(t, merchant, { amount });
      expect((await pay(t, merchant, qr.id, PAYER)).status).toBe(201);
    }
    const transfer = await t.request('POST', '/api/v2/transfers', {
      apiKey: merchant.apiKey, headers: { 'idempotency-key': randomUUID() },
      body: { business_code: merchant.businessCode, amount: 20, currency: 'BOB', destination: DESTINATION },
    });
    expect(transfer.status).toBe(201);
    const balance = (await t.request('GET', '/api/v2/balance', { apiKey: merchant.apiKey })).body;

    const home = await owner.get('/console');
    expect(home.status).toBe(200);
    // Fees: 1.5 % + 0.30 of 100.00 is 1.80, of 50.00 is 1.05; the transfer's 1.50: 4.35 in all.
    expect(figure(home.text, 'collected')).toEqual({ amount: 'Bs 150,00', count: '2 hoy' });
    expect(figure(home.text, 'fees')).toEqual({ amount: 'Bs 4,35', count: '3 hoy' });
    expect(figure(home.text, 'net')).toEqual({ amount: 'Bs 145,65', count: null });
    expect(figure(home.text, 'payouts')).toEqual({ amount: 'Bs 20,00', count: '1 hoy' });
    // The balance the API answers: 150.00 − 4.35 − 20.00 available, the transfer on its way.
    expect(balance).toMatchObject({ available: 125.65, pending_out: 20 });
    expect(figure(home.text, 'available')).toEqual({ amount: 'Bs 125,65', count: null });
    expect(figure(home.text, 'pending-out')).toEqual({ amount: 'Bs 20,00', count: null });
    expect(figure(home.text, 'refunds')).toBeNull(); // none today: not shown

    const english = await owner.get('/console?lang=en');
    expect(figure(english.text, 'collected')).toEqual({ amount: 'Bs 150.00', count: '2 today' });
  });

  it('a payment of yesterday is not today\'s', async () => {
    const other = await t.createMerchant({ name: 'Almacén Ayer' });
    const otherOwner = await newOwner(t, other.businessCode, 'glance.yesterday@example.com');
    const qr = await createQr(t, other, { amount: 30 });
    expect((await pay(t, other, qr.id, PAYER)).status).toBe(201);
    t.clock.advance(24 * 60 * 60_000);
    try {
      // A day idle ends the session (12 hours): sign in again, as the owner would.
      expect((await otherOwner.signIn('glance.yesterday@example.com', 'correct horse battery')).status).toBe(303);
      const home = await otherOwner.get('/console');
      expect(figure(home.text, 'collected')).toEqual({ amount: 'Bs 0,00', count: '0 hoy' });
      expect(figure(home.text, 'available')).toEqual({ amount: 'Bs 30,00', count: null });
    } finally {
      t.clock.advance(-24 * 60 * 60_000);
    }
  });

  it('shows a cashier no money of the business, and only the cashier\'s sections', async () => {
    const home = await cashier.get('/console');
    expect(home.status).toBe(200);
    expect(home.text).not.toContain('id="glance"');
    expect(home.text).not.toContain('data-figure=');
    expect(home.text).toContain('data-section="/console/terminal"');
    expect(home.text).toContain('data-section="/console/terminal/today"');
    expect(home.text).not.toContain('data-section="/console/users"');
    const ownerHome = await owner.get('/console');
    expect(ownerHome.text).toContain('data-section="/console/users"');
    expect(ownerHome.text).toContain('data-section="/console/sessions"');
  });
});
