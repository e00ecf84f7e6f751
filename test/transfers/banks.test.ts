import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { DEFAULT_BANKS } from '../../src/transfers/banks.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { fixtureRoutes } from '../helpers/fixture-routes.ts';
import { fundedMerchant, postTransfer, transferBody } from './helpers.ts';

const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'mps-banks-'));
afterAll(() => fs.rmSync(folder, { recursive: true, force: true }));
const writeBanks = (name: string, content: unknown) => {
  const file = path.join(folder, name);
  fs.writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
};

describe('BANKS_FILE', () => {
  it('ships a default list of Bolivian banks with unique codes', () => {
    expect(DEFAULT_BANKS[0]).toEqual({ bankCode: 1001, name: 'Banco Nacional de Bolivia' });
    expect(new Set(DEFAULT_BANKS.map((bank) => bank.bankCode)).size).toBe(DEFAULT_BANKS.length);
    expect(loadConfig({}).banks).toBeNull();
  });

  it('reads a JSON list of { bank_code, name }', () => {
    const file = writeBanks('ok.json', [{ bank_code: 7, name: 'Banco Siete' }, { bank_code: 8, name: 'Banco Ocho' }]);
    expect(loadConfig({ BANKS_FILE: file }).banks).toEqual([{ bankCode: 7, name: 'Banco Siete' }, { bankCode: 8, name: 'Banco Ocho' }]);
  });

  it.each([
    ['a missing file', path.join(folder, 'nope.json')],
    ['not JSON', writeBanks('bad.json', '{')],
    ['an empty list', writeBanks('empty.json', [])],
    ['a duplicate code', writeBanks('dup.json', [{ bank_code: 7, name: 'A' }, { bank_code: 7, name: 'B' }])],
    ['a code that is not a positive integer', writeBanks('code.json', [{ bank_code: '7', name: 'A' }])],
    ['a blank name', writeBanks('name.json', [{ bank_code: 7, name: ' ' }])],
    ['an unknown key', writeBanks('key.json', [{ bank_code: 7, name: 'A', swift: 'X' }])],
  ])('refuses %s with one line naming BANKS_FILE', (_what, file) => {
    expect(() => loadConfig({ BANKS_FILE: file })).toThrow(ConfigError);
    expect(() => loadConfig({ BANKS_FILE: file })).toThrow(/^BANKS_FILE=/);
  });
});

describe.each(databaseKinds())('a configured bank list on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind, plugins: [fixtureRoutes], env: { BANKS_FILE: writeBanks('app.json', [{ bank_code: 77, name: 'Banco de Prueba' }]) } });
  });
  afterAll(() => t.close());

  it('is what GET /api/v2/banks lists and what bank_code accepts', async () => {
    const merchant = await fundedMerchant(t, '500.00');
    const banks = await t.request('GET', '/api/v2/banks', { apiKey: merchant.apiKey });
    expect(banks.body).toEqual({ data: [{ bank_code: 77, name: 'Banco de Prueba' }] });
    const destination = { type: 'bank_account', account_number: '123456', account_titular: 'Ana' };
    const accepted = await postTransfer(t, merchant, transferBody(merchant.businessCode, { destination: { ...destination, bank_code: 77 } }));
    expect(accepted.status).toBe(201);
    const refused = await postTransfer(t, merchant, transferBody(merchant.businessCode, { destination: { ...destination, bank_code: 1001 } }));
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual([expect.objectContaining({ field: 'destination.bank_code', code: 'unknown_bank' })]);
  });

  it('answers GET /api/v2/banks to a partner key too', async () => {
    const partner = await t.createPartner();
    expect((await t.request('GET', '/api/v2/banks', { apiKey: partner.masterKey })).status).toBe(200);
  });

  it('documents the transfer routes in the OpenAPI document', async () => {
    const response = await t.request('GET', '/openapi.json');
    expect(response.status).toBe(200);
    expect(Object.keys(response.body.paths)).toEqual(expect.arrayContaining([
      '/api/v2/transfers', '/api/v2/transfers/{id}', '/api/v2/transfers/{id}/cancel', '/api/v2/banks', '/api/v2/sandbox/transfers/{id}/advance',
    ]));
  });
});
