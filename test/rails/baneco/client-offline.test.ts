// The bank's client where no bank is needed: nothing listening, and a caller's programming errors. The
// client's behaviour against a bank (tokens, 401, refusals, 5xx, stalls, malformed answers) is tested
// against the bank simulator in client.test.ts.
import net from 'node:net';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { BanecoConfig } from '../../../src/config.ts';
import { FullAccountNumber } from '../../../src/masking.ts';
import type { Centavos } from '../../../src/money.ts';
import { BanecoClient, type BanecoCallRecord } from '../../../src/rails/baneco/client.ts';

const SECRETS = { password: 'pw-Very-Secret-123', aesKey: '40A318B299F245C2B697176723088629', callbackSecret: 'cb_'.padEnd(40, 'x'), account: '1000-2000-3000' };

function config(url: string): BanecoConfig {
  return {
    url, user: 'mps-user', ...SECRETS, branchCode: null, qrDueDays: 365, pollIntervalMs: 30_000, batchIntervalMs: 60_000,
    amlSource: 'Cobros QR de comercios', amlDestination: 'Pago a comercio', timeoutMs: 2_000,
  };
}

/** A port on 127.0.0.1 that nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('the bank client without a bank', () => {
  it('reports unknown (no token: the operation was never sent) when nothing answers, naming no secret', async () => {
    const records: BanecoCallRecord[] = [];
    const client = new BanecoClient({ config: config(`http://127.0.0.1:${await closedPort()}/ApiGateway/`), serviceTimeZone: 'America/La_Paz', onCall: (record) => records.push(record) });
    const result = await client.statusQr('21061401016000000003');
    expect(result).toMatchObject({ outcome: 'unknown', reason: 'no_token', httpStatus: null });
    expect(result.outcome === 'unknown' && result.problem).toMatch(/^authentication connection: connection failed/);
    expect(records).toEqual([{ operation: 'authenticate', outcome: 'unknown', httpStatus: null, latencyMs: expect.any(Number) }]);
    expect(result.calls).toEqual(records);
    const shown = `${JSON.stringify(result)} ${inspect(client, { showHidden: true })} ${JSON.stringify(client)}`;
    for (const secret of Object.values(SECRETS)) expect(shown).not.toContain(secret);
  });

  it('throws for a caller\'s programming errors before sending anything', () => {
    const client = new BanecoClient({ config: config('http://127.0.0.1:9/'), serviceTimeZone: 'America/La_Paz' });
    const qr = { transactionId: 'q', amountCentavos: 100 as Centavos, description: '', dueDate: '2026-11-27', singleUse: true, modifyAmount: false };
    expect(() => client.generateQr({ ...qr, dueDate: '2026-02-30' })).toThrow(/dueDate/);
    expect(() => client.generateQr({ ...qr, amountCentavos: 0 as Centavos })).toThrow(RangeError);
    expect(() => client.paidQr('20261127')).toThrow(/yyyy-MM-dd/);
    expect(() => client.accountHistory('2026-11-01', 'today')).toThrow(/yyyy-MM-dd/);
    expect(() => client.uploadBatch({ batchId: 'mps-b-1', items: [] })).toThrow(RangeError);
    const item = { batchDetailId: 'mps-transfer-1', amountCentavos: 100 as Centavos, accountNumber: new FullAccountNumber('1-2'), bankCode: 1016, beneficiaryName: 'A', note: '' };
    expect(() => client.uploadBatch({ batchId: 'mps-b-1', items: Array.from({ length: 501 }, () => item) })).toThrow(RangeError);
  });

  it('refuses an AES key that is not 32 ASCII characters at construction', () => {
    expect(() => new BanecoClient({ config: { ...config('http://127.0.0.1:9/'), aesKey: 'short' }, serviceTimeZone: 'America/La_Paz' })).toThrow(/32 ASCII/);
  });
});
