// Statements and the CSV export through HTTP (docs/api-reference.md#statements): days in SERVICE_TIMEZONE,
// every closing the next opening, a past day's closing what `available` was when it ended — also after a
// transfer of that day fails the next — and the export parsed by a real CSV parser.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { dayRange, exportEntries } from '../../src/ledger/statements.ts';
import { toEntryCsvRow } from '../../src/ledger/views.ts';
import { bankNameLookup, configuredBanks } from '../../src/transfers/banks.ts';
import { createQr, pay } from '../qr/qr-helpers.ts';

const COLUMNS = [
  'entry_id', 'posted_at', 'kind', 'amount', 'balance_after', 'currency', 'reference', 'external_reference',
  'counterparty_bank', 'counterparty_account', 'counterparty_name', 'qr_id', 'payment_id', 'transfer_id', 'refund_id',
  'business_date',
];
const PAYER = { source_bank: 'Banco Unión', account_number: '10000123454321', account_titular: 'Ana Pérez' };

describe.each(databaseKinds())('statements on %s', (kind) => {
  let t: TestApp;
  let merchant: { businessCode: number; apiKey: string };
  const ids: Record<string, string | number> = {};

  const get = (path: string) => t.request('GET', path, { apiKey: merchant.apiKey });
  const statement = (from: string, to: string) => get(`/api/v2/balance/statement?from=${from}&to=${to}`);

  beforeAll(async () => {
    t = await startTestApp({ kind, env: { SANDBOX_SETTLEMENT: 'off' } });
    // Postings are never dated before the merchant's last change (its creation included): start earlier.
    t.clock.set('2026-11-18T12:00:00.000Z');
    merchant = await t.createMerchant({ ach_enabled: true });
    // 2026-11-20 in La Paz (UTC-4): a payment, a transfer, and a payment at 23:30 local (03:30 UTC the next day).
    t.clock.set('2026-11-20T14:00:00.000Z');
    const qr = await createQr(t, merchant, { amount: 100, description: 'Pedido 7, "rojo"' });
    ids.qr = qr.id;
    ids.payment = (await pay(t, merchant, qr.id, PAYER)).body.id;
    t.clock.set('2026-11-20T14:10:00.000Z');
    const transfer = await t.request('POST', '/api/v2/transfers', {
      apiKey: merchant.apiKey, headers: { 'idempotency-key': randomUUID() },
      body: { business_code: merchant.businessCode, amount: 30, currency: 'BOB', reference: 'Proveedor',
        destination: { type: 'bank_account', bank_code: 1014, account_number: '20150123455678', account_titular: 'Juan Pérez' } },
    });
    ids.transfer = transfer.body.id;
    t.clock.set('2026-11-21T03:30:00.000Z');
    const late = await createQr(t, merchant, { amount: 7 });
    await pay(t, merchant, late.id, PAYER);
    // 2026-11-21: the transfer fails, a refund, and a late payment refunded at once.
    t.clock.set('2026-11-21T15:00:00.000Z');
    expect((await t.request('POST', `/api/v2/sandbox/transfers/${ids.transfer}/advance`, { apiKey: merchant.apiKey, body: { to: 'FAILED' } })).status).toBe(200);
    t.clock.set('2026-11-21T15:01:00.000Z');
    const refund = await t.request('POST', '/api/v2/refunds', {
      apiKey: merchant.apiKey, headers: { 'idempotency-key': randomUUID() }, body: { payment_id: ids.payment, amount: 20 },
    });
    ids.refund = refund.body.id;
    t.clock.set('2026-11-21T15:02:00.000Z');
    const canceled = await createQr(t, merchant, { amount: 5 });
    await t.request('POST', `/api/v2/simple-qrs/${canceled.id}/cancel`, { apiKey: merchant.apiKey });
    const latePayment = await t.request('POST', `/api/v2/sandbox/simple-qrs/${canceled.id}/late-payments`, { apiKey: merchant.apiKey, body: PAYER });
    ids.latePayment = latePayment.body.id;
    ids.lateRefund = latePayment.body.refund.id;
    t.clock.set('2026-11-22T16:00:00.000Z'); // today: 2026-11-22, 12:00 in La Paz
  });
  afterAll(() => t.close());

  it('lists every day with its opening, totals and closing; each closing is the next opening', async () => {
    const response = await statement('2026-11-19', '2026-11-22');
    expect(response.status).toBe(200);
    const none = { count: 0, amount: 0 };
    expect(response.body).toEqual({
      business_code: merchant.businessCode, currency: 'BOB', from: '2026-11-19', to: '2026-11-22',
      opening_balance: 0, closing_balance: 87,
      days: [
        { date: '2026-11-19', opening_balance: 0, payments: none, refunds: none, transfers: none, returns: none, fees: none, closing_balance: 0 },
        { date: '2026-11-20', opening_balance: 0, payments: { count: 2, amount: 107 }, refunds: none, transfers: { count: 1, amount: -30 }, returns: none, fees: none, closing_balance: 77 },
        { date: '2026-11-21', opening_balance: 77, payments: { count: 1, amount: 5 }, refunds: { count: 2, amount: -25 }, transfers: none, returns: { count: 1, amount: 30 }, fees: none, closing_balance: 87 },
        { date: '2026-11-22', opening_balance: 87, payments: none, refunds: none, transfers: none, returns: none, fees: none, closing_balance: 87 },
      ],
    });
    const balance = await get('/api/v2/balance');
    expect(balance.body.available).toBe(87);
  });

  it('a past day\'s closing is what available was at its end, though its transfer failed the next day', async () => {
    const day = (await statement('2026-11-20', '2026-11-20')).body;
    expect(day).toMatchObject({ opening_balance: 0, closing_balance: 77 });
    const next = (await statement('2026-11-21', '2026-11-21')).body;
    expect(next).toMatchObject({ opening_balance: 77, closing_balance: 87 });
  });

  it('answers 422 naming each bad date, an inverted or too long range, a future day, a missing bound', async () => {
    const fields = async (query: string) => {
      const response = await get(`/api/v2/balance/statement${query}`);
      expect(response.status).toBe(422);
      return Object.fromEntries(response.body.errors.map((e: { field: string; code: string }) => [e.field, e.code]));
    };
    expect(await fields('?from=2026-11-01&to=20261101')).toEqual({ to: 'invalid_format' });
    expect(await fields('?from=2026-02-30&to=2026-13-01')).toEqual({ from: 'invalid_value', to: 'invalid_value' });
    expect(await fields('?from=2026-11-10&to=2026-11-09')).toEqual({ to: 'invalid_value' });
    expect(await fields('?from=2025-11-21&to=2026-11-22')).toEqual({ to: 'too_large' });
    expect(await fields('?from=2026-11-22&to=2026-11-23')).toEqual({ to: 'invalid_value' });
    expect(await fields('?to=2026-11-22')).toEqual({ from: 'required' });
    expect(await fields('?from=0050-01-01&to=0050-01-02')).toEqual({ from: 'too_small' });
    expect(await fields('?from=1999-12-31&to=2000-01-02')).toEqual({ from: 'too_small' });
    expect((await statement('2000-01-01', '2000-01-02')).status).toBe(200);
    expect((await statement('2025-11-22', '2026-11-22')).body.days).toHaveLength(366);
    expect((await t.request('GET', '/api/v2/balance/entries.csv?from=2026-11-22&to=2026-11-21', { apiKey: merchant.apiKey })).status).toBe(422);
  });

  it('exports the entries that changed available as RFC 4180 CSV, an attachment, parsed by csv-parse', async () => {
    const response = await t.request('GET', '/api/v2/balance/entries.csv?from=2026-11-20&to=2026-11-22', { apiKey: merchant.apiKey });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="entries-${merchant.businessCode}-2026-11-20-2026-11-22.csv"`);
    expect(response.text).not.toContain('10000123454321');
    expect(response.text).not.toContain('20150123455678');
    const rows: Record<string, string>[] = parse(response.text, { columns: true, record_delimiter: '\r\n' });
    expect(Object.keys(rows[0]!)).toEqual([
      'entry_id', 'posted_at', 'kind', 'amount', 'balance_after', 'currency', 'reference', 'external_reference',
      'counterparty_bank', 'counterparty_account', 'counterparty_name', 'qr_id', 'payment_id', 'transfer_id', 'refund_id', 'business_date',
    ]);
    // business_date is the day in SERVICE_TIMEZONE (La Paz, UTC−4): the payment posted at 03:30 UTC on the
    // 21st belongs to the statement of the 20th.
    expect(rows.map((r) => [r.posted_at, r.kind, r.amount, r.balance_after, r.business_date])).toEqual([
      ['2026-11-20T14:00:00.000Z', 'payment', '100.00', '100.00', '2026-11-20'],
      ['2026-11-20T14:10:00.000Z', 'transfer', '-30.00', '70.00', '2026-11-20'],
      ['2026-11-21T03:30:00.000Z', 'payment', '7.00', '77.00', '2026-11-20'],
      ['2026-11-21T15:00:00.000Z', 'transfer_return', '30.00', '107.00', '2026-11-21'],
      ['2026-11-21T15:01:00.000Z', 'refund', '-20.00', '87.00', '2026-11-21'],
      ['2026-11-21T15:02:00.000Z', 'payment', '5.00', '92.00', '2026-11-21'],
      ['2026-11-21T15:02:00.000Z', 'refund', '-5.00', '87.00', '2026-11-21'],
    ]);
    expect(rows[0]).toMatchObject({
      reference: 'Pedido 7, "rojo"', currency: 'BOB', counterparty_bank: 'Banco Unión', counterparty_account: '**********4321',
      counterparty_name: 'Ana Pérez', qr_id: String(ids.qr), payment_id: String(ids.payment), transfer_id: '', refund_id: '',
    });
    // A bank's name on every row, a transfer's destination too (its code is in the transfer itself).
    expect(rows[1]).toMatchObject({ reference: 'Proveedor', counterparty_bank: 'Banco de la Nación Argentina (sucursal Bolivia)', counterparty_account: '**********5678', transfer_id: String(ids.transfer) });
    expect(rows[3]).toMatchObject({ kind: 'transfer_return', transfer_id: String(ids.transfer) });
    expect(rows[4]).toMatchObject({ refund_id: String(ids.refund), payment_id: String(ids.payment), qr_id: String(ids.qr) });
    expect(rows[6]).toMatchObject({ refund_id: String(ids.lateRefund), payment_id: String(ids.latePayment) });
    expect(new Set(rows.map((r) => r.entry_id)).size).toBe(rows.length);
  });

  describe('an export that spreadsheets and CSV readers read as the service wrote it', () => {
    /** What a spreadsheet reads as a formula at a line's start (docs/journal.md#the-csv-export). */
    const FORMULA_START = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;
    /** Hostile text a merchant (a terminal key sets QR descriptions) or a payer's bank may send. */
    const DESCRIPTIONS = [
      'Pedido 8\n=HYPERLINK("http://evil.example","x")', 'Pedido 9\r@SUM(A1:A9)', '\uFF1D1+1', '-2+3', '+cmd|/C calc', '\tTab',
      'línea\r\n\uFF0Bmás', 'ok, "quoted"\n\n\uFF20x', '\r\n=crlf first',
    ];
    const NAMES = ['\uFF20SUM(A1)', 'Ana\n+1', '\uFF0D5'];
    let shop: { businessCode: number; apiKey: string };
    let csv: string;

    beforeAll(async () => {
      shop = await t.createMerchant();
      for (const [i, description] of DESCRIPTIONS.entries()) {
        const qr = await createQr(t, shop, { amount: 30 + i, description });
        const paid = await pay(t, shop, qr.id, { ...PAYER, account_titular: NAMES[i % NAMES.length] });
        expect(paid.status).toBe(201);
        if (i === 0) {
          const refund = await t.request('POST', '/api/v2/refunds', {
            apiKey: shop.apiKey, headers: { 'idempotency-key': randomUUID() }, body: { payment_id: paid.body.id, amount: 25, description: '=refund' },
          });
          expect(refund.status).toBe(201);
        }
      }
      const response = await t.request('GET', '/api/v2/balance/entries.csv?from=2026-11-22&to=2026-11-22', { apiKey: shop.apiKey });
      expect(response.status).toBe(200);
      csv = response.text;
    });

    /** Every parsed record: one per entry, no text cell or line inside one starting a formula, amounts plain numbers. */
    const expectInert = (header: string[], records: string[][]) => {
      expect(header).toEqual(COLUMNS);
      expect(records).toHaveLength(DESCRIPTIONS.length + 1); // the payments and the refund
      for (const record of records) {
        expect(record).toHaveLength(COLUMNS.length);
        record.forEach((field, i) => {
          if (COLUMNS[i] === 'amount' || COLUMNS[i] === 'balance_after') expect(field).toMatch(/^-?[0-9]+\.[0-9]{2}$/);
          else for (const line of field.split(/\r\n|\r|\n/)) expect(line, `${COLUMNS[i]}: ${JSON.stringify(field)}`).not.toMatch(FORMULA_START);
        });
      }
      const byKind = records.map((record) => Object.fromEntries(COLUMNS.map((column, i) => [column, record[i]!])));
      // Amounts are the service's own numbers: a refund reads -25.00, as a spreadsheet must see it.
      expect(byKind.find((r) => r.kind === 'refund')).toMatchObject({ amount: '-25.00', reference: "'=refund" });
      expect(byKind.find((r) => r.amount === '30.00')).toMatchObject({
        reference: 'Pedido 8\n\'=HYPERLINK("http://evil.example","x")', counterparty_name: "'\uFF20SUM(A1)",
      });
      expect(byKind.find((r) => r.amount === '31.00')).toMatchObject({ reference: "Pedido 9\r'@SUM(A1:A9)", counterparty_name: "Ana\n'+1" });
      expect(byKind.map((r) => r.reference)).toEqual(expect.arrayContaining([
        "'\uFF1D1+1", "'-2+3", "'+cmd|/C calc", "'\tTab", "línea\r\n'\uFF0Bmás", 'ok, "quoted"\n\n\'\uFF20x',
        "'\r\n'=crlf first", // a CR at the start is a formula start of its own (Excel reads \r= as =)
      ]));
    };

    it('quotes every field holding a CR or LF and neutralises formula starts, read back by csv-parse', () => {
      // A bare LF or CR outside quotes would start a record of its own for a reader splitting on any line break.
      const outsideQuotes = csv.replace(/"(?:[^"]|"")*"/g, '');
      expect(outsideQuotes.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
      // Any line break ends a record for this reader, as for many: only quoting keeps one inside a field.
      const [header, ...records] = parse(csv, { record_delimiter: ['\r\n', '\n', '\r'] }) as string[][];
      expectInert(header!, records);
    });

    it('is read the same by Python\'s csv module', (context) => {
      const probe = spawnSync('python3', ['--version']);
      if (probe.error) {
        // CI must prove it (.ci/run installs python3); a machine without Python only skips.
        if (process.env.CI === 'true') throw new Error('CI=true but python3 is missing: the export must be read by Python\'s csv module');
        context.skip();
      }
      const script = 'import csv, json, sys; print(json.dumps(list(csv.reader(sys.stdin))))';
      const python = spawnSync('python3', ['-c', script], { input: csv, encoding: 'utf8', env: { ...process.env, PYTHONIOENCODING: 'utf-8' } });
      expect(python.stderr).toBe('');
      expect(python.status).toBe(0);
      const [header, ...records] = JSON.parse(python.stdout) as string[][];
      expectInert(header!, records);
    });

    it('is the same file from the CLI\'s writer (mps statement --csv runs exportEntries with toEntryCsvRow and the configured banks)', async () => {
      const range = dayRange('2026-11-22', '2026-11-22', t.config.serviceTimeZone, t.clock.now());
      let text = '';
      const bankName = bankNameLookup(configuredBanks(t.config));
      for await (const chunk of exportEntries(t.db, shop.businessCode, range, (line, zone) => toEntryCsvRow(line, zone, bankName))) text += String(chunk);
      expect(text).toBe(csv);
    });
  });

  it('reads a long export in batches: 4,500 entries, every one once, in order, running balances continuous', async () => {
    const busy = await t.createMerchant();
    const { seedHistory } = await import('../helpers/journal-seed.ts');
    await seedHistory(t.db, busy.businessCode, { count: 4_500, start: new Date('2026-11-20T12:00:00.000Z'), spacingMs: 30_000, transferEvery: 4 });
    const response = await t.request('GET', '/api/v2/balance/entries.csv?from=2026-11-20&to=2026-11-22', { apiKey: busy.apiKey });
    const rows: Array<Record<string, string>> = parse(response.text, { columns: true });
    expect(rows).toHaveLength(4_500);
    const ids = rows.map((r) => Number(r.entry_id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    let balance = 0;
    for (const row of rows) {
      balance += Math.round(Number(row.amount) * 100);
      expect(Math.round(Number(row.balance_after) * 100)).toBe(balance);
    }
    const statement = (await t.request('GET', '/api/v2/balance/statement?from=2026-11-20&to=2026-11-22', { apiKey: busy.apiKey })).body;
    expect(Math.round(statement.closing_balance * 100)).toBe(balance);
    expect(statement.days.reduce((n: number, d: { payments: { count: number }; transfers: { count: number } }) => n + d.payments.count + d.transfers.count, 0)).toBe(4_500);
  });

  it('exports only the days asked for, and a day without entries as the header alone', async () => {
    // 2026-11-21 in La Paz: the payment at 03:30 UTC was still 2026-11-20 there.
    const day = await t.request('GET', '/api/v2/balance/entries.csv?from=2026-11-21&to=2026-11-21', { apiKey: merchant.apiKey });
    expect((parse(day.text, { columns: true }) as Array<{ kind: string }>).map((r) => r.kind)).toEqual(['transfer_return', 'refund', 'payment', 'refund']);
    const empty = await t.request('GET', '/api/v2/balance/entries.csv?from=2026-11-19&to=2026-11-19', { apiKey: merchant.apiKey });
    expect(empty.text).toBe('entry_id,posted_at,kind,amount,balance_after,currency,reference,external_reference,counterparty_bank,counterparty_account,counterparty_name,qr_id,payment_id,transfer_id,refund_id,business_date\r\n');
  });

  it('shows a merchant only its own entries', async () => {
    const other = await t.createMerchant();
    const body = (await t.request('GET', '/api/v2/balance/statement?from=2026-11-20&to=2026-11-21', { apiKey: other.apiKey })).body;
    expect(body).toMatchObject({ business_code: other.businessCode, opening_balance: 0, closing_balance: 0 });
    const csv = await t.request('GET', '/api/v2/balance/entries.csv?from=2026-11-20&to=2026-11-21', { apiKey: other.apiKey });
    expect(parse(csv.text, { columns: true })).toEqual([]);
  });
});
