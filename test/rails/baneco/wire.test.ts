// Strict reading of the bank's answers and callbacks (contract §14, the bank's specification v1.3.0):
// every good shape is read into rail-neutral terms, every hostile one into a problem, never a throw.
import { describe, expect, it } from 'vitest';
import {
  ITEM_OUTCOME_OF_NOTIFY_STATUS, QR_STATE_OF_STATUS_CODE, readAccountHistoryAnswer, readAuthenticateAnswer, readBatchUploadAnswer,
  readCancelQrAnswer, readEnvelope, readGenerateQrAnswer, readPaidQrAnswer, readPaymentNotification, readStatusNotification,
  readStatusQrAnswer, wireDateOf, wirePathDate, type BankPayment, type PaymentQR,
} from '../../../src/rails/baneco/wire.ts';
import { cleanBankText, parseJsonText } from '../../../src/rails/baneco/reading.ts';

const ZONE = 'America/La_Paz';
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

function paymentQr(overrides: Partial<Record<keyof PaymentQR, unknown>> = {}): Record<string, unknown> {
  return {
    qrId: '21061401016000000003', transactionId: '987654', paymentDate: '2026-11-27T00:00:00', paymentTime: '14:05:09',
    currency: 'BOB', amount: 100.5, senderBankCode: '1016', senderName: 'Ana Pérez', senderDocumentId: '0',
    senderAccount: '******1913', description: 'Order 42', branchCode: '701', ...overrides,
  };
}

/** Every problem text must name fields, never values: none of these may appear in one. */
const VALUES = ['Ana Pérez', '1913', 'Order 42', 'secret-token'];

function expectProblem(reading: { ok: boolean; problem?: string }, pattern?: RegExp) {
  expect(reading.ok).toBe(false);
  if (pattern) expect(reading.problem).toMatch(pattern);
  for (const value of VALUES) expect(reading.problem).not.toContain(value);
}

/** Hostile bodies every reader must turn into a problem. */
const HOSTILE: unknown[] = [null, undefined, 0, 'text', [], [{}], true, {}, { responseCode: '0' }];

describe('parseJsonText', () => {
  it('reads JSON and turns malformed, empty, oversized and absurdly nested text into problems', () => {
    expect(parseJsonText('{"a":1}')).toEqual({ ok: true, value: { a: 1 } });
    expectProblem(parseJsonText(''), /not JSON/);
    expectProblem(parseJsonText('{"responseCode":0,'), /not JSON/);
    expectProblem(parseJsonText('<html>502 Bad Gateway</html>'), /not JSON/);
    expectProblem(parseJsonText('x'.repeat(101), 100), /longer than 100/);
    // V8 parses deep nesting without recursion; whatever it does, no exception escapes.
    const deep = '['.repeat(1_000_000) + ']'.repeat(1_000_000);
    expect(() => parseJsonText(deep, 5_000_000)).not.toThrow();
  });
});

describe('the envelope', () => {
  it('reads responseCode and message; a missing or null message is empty', () => {
    expect(readEnvelope({ responseCode: 0, message: '' })).toEqual({ ok: true, value: { responseCode: 0, message: '' } });
    expect(readEnvelope({ responseCode: 5 })).toEqual({ ok: true, value: { responseCode: 5, message: '' } });
    expect(readEnvelope({ responseCode: 7, message: null })).toEqual({ ok: true, value: { responseCode: 7, message: '' } });
  });

  it('refuses bodies without an integer responseCode', () => {
    for (const body of [...HOSTILE, { responseCode: 0.5 }, { responseCode: null }, { responseCode: 0, message: 5 }, { responseCode: 2 ** 60 }]) {
      expectProblem(readEnvelope(body));
    }
  });
});

describe('authenticate', () => {
  it('reads the token and refuses a missing, empty, spaced or huge one', () => {
    expect(readAuthenticateAnswer({ responseCode: 0, message: '', token: 'eyJhbGciOiJIUzI1NiJ9.e30.x' })).toEqual({ ok: true, value: { token: 'eyJhbGciOiJIUzI1NiJ9.e30.x' } });
    for (const token of [undefined, null, '', 'a b', 5, 'x'.repeat(9000), 'tok\u0000en']) {
      expectProblem(readAuthenticateAnswer({ responseCode: 0, token }), /token/);
    }
  });
});

describe('generateQR', () => {
  it('reads qrId and the PNG', () => {
    expect(readGenerateQrAnswer({ responseCode: 0, message: '', qrId: '21061401016000000003', qrImage: PNG }))
      .toEqual({ ok: true, value: { qrId: '21061401016000000003', qrImage: PNG } });
  });

  it('refuses a missing qrId, a non-PNG or non-base64 image', () => {
    expectProblem(readGenerateQrAnswer({ responseCode: 0, qrImage: PNG }), /qrId/);
    expectProblem(readGenerateQrAnswer({ responseCode: 0, qrId: 7, qrImage: PNG }), /qrId/);
    expectProblem(readGenerateQrAnswer({ responseCode: 0, qrId: 'a', qrImage: '/9j/4AAQSkZJRg==' }), /qrImage/);
    expectProblem(readGenerateQrAnswer({ responseCode: 0, qrId: 'a', qrImage: `data:image/png;base64,${PNG}` }), /qrImage/);
    expectProblem(readGenerateQrAnswer({ responseCode: 0, qrId: 'a' }), /qrImage/);
    for (const body of HOSTILE) expectProblem(readGenerateQrAnswer(body));
  });
});

describe('cancelQR', () => {
  it('needs only an object', () => {
    expect(readCancelQrAnswer({ responseCode: 0, message: '' })).toEqual({ ok: true, value: null });
    expectProblem(readCancelQrAnswer('ok'));
  });
});

describe('statusQR', () => {
  it('maps 0/1/9 to active/paid/cancelled through a closed table', () => {
    expect(QR_STATE_OF_STATUS_CODE).toEqual({ 0: 'active', 1: 'paid', 9: 'cancelled' });
    expect(readStatusQrAnswer({ responseCode: 0, statusQRCode: 0, payment: null }, ZONE)).toEqual({ ok: true, value: { state: 'active', payments: [] } });
    expect(readStatusQrAnswer({ responseCode: 0, statusQrCode: 9 }, ZONE)).toEqual({ ok: true, value: { state: 'cancelled', payments: [] } });
  });

  it('reads a paid QR\'s payments under either spelling, with paid_at in SERVICE_TIMEZONE and centavos from the number\'s text', () => {
    for (const key of ['statusQRCode', 'statusQrCode']) {
      const reading = readStatusQrAnswer({ responseCode: 0, message: '', [key]: 1, payment: [paymentQr()] }, ZONE);
      expect(reading.ok).toBe(true);
      if (!reading.ok) return;
      expect(reading.value.state).toBe('paid');
      const payment = reading.value.payments[0] as BankPayment;
      expect(payment).toEqual({
        kind: 'payment', qrId: '21061401016000000003', transactionId: '987654', paidAt: new Date('2026-11-27T18:05:09Z'),
        paymentDate: '2026-11-27', amountCentavos: 10050, senderBankCode: '1016', senderName: 'Ana Pérez',
        senderAccount: '******1913', description: 'Order 42', branchCode: '701',
      });
    }
  });

  it('reads amounts exactly: 0.1, 19.99, 1e3, 123456789.01', () => {
    const cases: [number, number][] = [[0.1, 10], [19.99, 1999], [1e3, 100000], [123456789.01, 12345678901], [0.07, 7]];
    for (const [amount, expected] of cases) {
      const reading = readStatusQrAnswer({ responseCode: 0, statusQRCode: 1, payment: [paymentQr({ amount })] }, ZONE);
      expect(reading.ok && (reading.value.payments[0] as BankPayment).amountCentavos).toBe(expected);
    }
  });

  it('keeps what it can of a payment it cannot record (USD, bad amounts, bad dates) instead of dropping it', () => {
    const bad: [Partial<Record<keyof PaymentQR, unknown>>, RegExp][] = [
      [{ currency: 'USD' }, /USD credits no merchant/],
      [{ currency: 'EUR' }, /currency/],
      [{ amount: 100.505 }, /two decimals/],
      [{ amount: 0.1 + 0.2 }, /two decimals/],
      [{ amount: '100.50' }, /JSON number/],
      [{ amount: -5 }, /at least 0/],
      [{ amount: 0 }, /at least 1 centavos/],
      [{ amount: 1e300 }, /amount/],
      [{ paymentDate: '2026-02-30T00:00:00' }, /calendar/],
      [{ paymentDate: '27/11/2026' }, /date-time/],
      [{ paymentTime: '25:00:00' }, /time/],
      [{ senderName: 'x'.repeat(501) }, /senderName/],
      [{ senderName: 'Ana\u0000' }, /U\+0000/],
      [{ senderBankCode: 1016 }, /senderBankCode/],
      [{ qrId: 'a b' }, /qrId/],
    ];
    for (const [overrides, problem] of bad) {
      const reading = readStatusQrAnswer({ responseCode: 0, statusQRCode: 1, payment: [paymentQr(overrides)] }, ZONE);
      expect(reading.ok, JSON.stringify(overrides)).toBe(true);
      if (!reading.ok) return;
      const [payment] = reading.value.payments;
      expect(payment?.kind).toBe('unreadable');
      if (payment?.kind !== 'unreadable') return;
      expect(payment.problem).toMatch(problem);
      for (const value of VALUES) expect(payment.problem).not.toContain(value);
      expect(payment.transactionId).toBe('987654');
    }
    const usd = readStatusQrAnswer({ responseCode: 0, statusQRCode: 1, payment: [paymentQr({ currency: 'USD' })] }, ZONE);
    expect(usd.ok && usd.value.payments[0]).toMatchObject({ kind: 'unreadable', qrId: '21061401016000000003', currency: 'USD' });
  });

  it('masks a sender account the bank sent whole, and leaves out entries without a transactionId', () => {
    const reading = readStatusQrAnswer({
      responseCode: 0, statusQRCode: 1,
      payment: [paymentQr({ senderAccount: '20150123456789' }), paymentQr({ transactionId: null }), paymentQr({ transactionId: '' })],
    }, ZONE);
    expect(reading.ok && reading.value.payments.map((p) => (p as BankPayment).senderAccount)).toEqual(['**********6789']);
  });

  it('refuses unknown codes, disagreeing spellings, a paid QR without payments and hostile shapes', () => {
    const bodies: unknown[] = [
      ...HOSTILE,
      { responseCode: 0, statusQRCode: 2 },
      { responseCode: 0, statusQRCode: '1', payment: [paymentQr()] },
      { responseCode: 0 },
      { responseCode: 0, statusQRCode: 1, statusQrCode: 9, payment: [paymentQr()] },
      { responseCode: 0, statusQRCode: 1, payment: [] },
      { responseCode: 0, statusQRCode: 1 },
      { responseCode: 0, statusQRCode: 1, payment: paymentQr() },
      { responseCode: 0, statusQRCode: 1, payment: ['x'] },
      { responseCode: 0, statusQRCode: 0, payment: 'none' },
    ];
    for (const body of bodies) expectProblem(readStatusQrAnswer(body, ZONE));
  });
});

describe('paidQR', () => {
  it('reads the day\'s list; a missing list is a problem, not an empty day', () => {
    const reading = readPaidQrAnswer({ responseCode: 0, message: '', paymentList: [paymentQr(), paymentQr({ transactionId: '2', currency: 'USD' })] }, ZONE);
    expect(reading.ok && reading.value.payments.map((p) => p.kind)).toEqual(['payment', 'unreadable']);
    expect(readPaidQrAnswer({ responseCode: 0, paymentList: [] }, ZONE)).toEqual({ ok: true, value: { payments: [] } });
    expectProblem(readPaidQrAnswer({ responseCode: 0 }, ZONE), /paymentList/);
    expectProblem(readPaidQrAnswer({ responseCode: 0, paymentList: null }, ZONE), /paymentList/);
    expectProblem(readPaidQrAnswer({ responseCode: 0, paymentList: new Array(100_001).fill(0) }, ZONE), /more than/);
    for (const body of HOSTILE) expectProblem(readPaidQrAnswer(body, ZONE));
  });
});

describe('accounts/history', () => {
  const header = {
    accountCode: 'ENC', accountTypeCode: 'CC', productName: 'Cuenta corriente', status: 'ACTIVA', currency: 'BOB',
    balance: 1500.25, balanceReserved: 0, balanceRetained: 0, balanceAvailable: 1500.25,
  };
  const detail = (overrides: Record<string, unknown> = {}) => ({
    transactionId: 5551, date: '2026-11-26', time: '09:10:11', documentNumber: 42, transactionType: 'D', amount: -25.5,
    description: 'Pago a comercio', clienteNote: '', ...overrides,
  });

  it('reads the header and signed entries, D/C through a closed table', () => {
    const reading = readAccountHistoryAnswer({
      responseCode: 0, message: '', accountHeader: header,
      accountDetailList: [detail(), detail({ transactionId: 5552, transactionType: 'C', amount: 100.5, clienteNote: null })],
      accountWithheldList: [],
    }, ZONE);
    expect(reading).toEqual({
      ok: true,
      value: {
        accountTypeCode: 'CC', status: 'ACTIVA', currency: 'BOB', balanceCentavos: 150025, balanceAvailableCentavos: 150025,
        entries: [
          { transactionId: '5551', date: '2026-11-26', time: '09:10:11', bookedAt: new Date('2026-11-26T13:10:11Z'), documentNumber: '42', direction: 'debit', amountCentavos: -2550, description: 'Pago a comercio', note: '' },
          { transactionId: '5552', date: '2026-11-26', time: '09:10:11', bookedAt: new Date('2026-11-26T13:10:11Z'), documentNumber: '42', direction: 'credit', amountCentavos: 10050, description: 'Pago a comercio', note: '' },
        ],
      },
    });
  });

  it('refuses USD accounts, unknown statuses and types, contradicting signs, text ids and bad amounts', () => {
    const bodies: unknown[] = [
      ...HOSTILE,
      { responseCode: 0, accountHeader: { ...header, currency: 'USD' }, accountDetailList: [] },
      { responseCode: 0, accountHeader: { ...header, status: 'OTRA' }, accountDetailList: [] },
      { responseCode: 0, accountHeader: { ...header, balance: '1.00' }, accountDetailList: [] },
      { responseCode: 0, accountHeader: header },
      { responseCode: 0, accountDetailList: [] },
      { responseCode: 0, accountHeader: header, accountDetailList: [detail({ transactionType: 'X' })] },
      { responseCode: 0, accountHeader: header, accountDetailList: [detail({ amount: 25.5 })] },
      { responseCode: 0, accountHeader: header, accountDetailList: [detail({ transactionType: 'C' })] },
      { responseCode: 0, accountHeader: header, accountDetailList: [detail({ transactionId: '5551' })] },
      { responseCode: 0, accountHeader: header, accountDetailList: [detail({ transactionId: 2 ** 60 })] },
      { responseCode: 0, accountHeader: header, accountDetailList: [detail({ amount: -25.555 })] },
      { responseCode: 0, accountHeader: header, accountDetailList: [detail({ date: '2026-13-01' })] },
    ];
    for (const body of bodies) expectProblem(readAccountHistoryAnswer(body, ZONE));
  });
});

describe('batchPayment/upload', () => {
  it('reads bankBatchId as text and refuses anything but a whole number', () => {
    expect(readBatchUploadAnswer({ responseCode: 0, message: '', bankBatchId: 778 })).toEqual({ ok: true, value: { bankBatchId: '778' } });
    for (const bankBatchId of ['778', -1, 1.5, null, 2 ** 60]) expectProblem(readBatchUploadAnswer({ responseCode: 0, bankBatchId }), /bankBatchId/);
  });
});

describe('the notifyPaymentQR callback', () => {
  it('reads the payment as a hint naming its QR', () => {
    const reading = readPaymentNotification({ payment: paymentQr() }, ZONE);
    expect(reading.ok && reading.value.qrId).toBe('21061401016000000003');
    expect(reading.ok && reading.value.payment.kind).toBe('payment');
    const usd = readPaymentNotification({ payment: paymentQr({ currency: 'USD' }) }, ZONE);
    expect(usd.ok && usd.value.payment.kind).toBe('unreadable');
  });

  it('refuses a body without a readable payment qrId', () => {
    for (const body of [...HOSTILE, { payment: null }, { payment: [] }, { payment: paymentQr({ qrId: undefined }) }, paymentQr(), { __proto__: { payment: paymentQr() } }]) {
      expectProblem(readPaymentNotification(body, ZONE));
    }
    expectProblem(readPaymentNotification(JSON.parse('{"__proto__":{"payment":{"qrId":"x"}}}'), ZONE));
  });
});

describe('the notifyStatus callback', () => {
  const accepted = { bankBatchId: 778, batchId: 'mps-b-1', batchDetailId: 'mps-transfer-12', status: 'ACEP', transactionIdDebit: 9001, transactionIdCredit: 'C-77' };

  it('maps ACEP/RECH to accepted/rejected through a closed table; a rejection\'s 0 and "" are no ids', () => {
    expect(ITEM_OUTCOME_OF_NOTIFY_STATUS).toEqual({ ACEP: 'accepted', RECH: 'rejected' });
    expect(readStatusNotification(accepted)).toEqual({
      ok: true,
      value: { bankBatchId: '778', batchId: 'mps-b-1', batchDetailId: 'mps-transfer-12', bankStatus: 'ACEP', outcome: 'accepted', reason: null, transactionIdDebit: '9001', transactionIdCredit: 'C-77' },
    });
    expect(readStatusNotification({ bankBatchId: 778, batchId: 'mps-b-1', batchDetailId: 'mps-transfer-13', status: 'RECH', descriptionStatus: 'Cuenta cerrada' })).toEqual({
      ok: true,
      value: { bankBatchId: '778', batchId: 'mps-b-1', batchDetailId: 'mps-transfer-13', bankStatus: 'RECH', outcome: 'rejected', reason: 'Cuenta cerrada', transactionIdDebit: null, transactionIdCredit: null },
    });
    expect(readStatusNotification({ bankBatchId: 778, batchId: 'mps-b-1', batchDetailId: 'mps-transfer-14', status: 'RECH', transactionIdDebit: 0, transactionIdCredit: '' })).toMatchObject({
      ok: true, value: { outcome: 'rejected', reason: null, transactionIdDebit: null, transactionIdCredit: null },
    });
    expect(readStatusNotification({ bankBatchId: 778, batchId: 'mps-b-1', batchDetailId: 'mps-transfer-15', status: 'ACEP', transactionIdDebit: 0, transactionIdCredit: '' }).ok).toBe(false);
  });

  it('refuses unknown statuses, an ACEP without its debit, and wrong types', () => {
    const bodies: unknown[] = [
      ...HOSTILE,
      { ...accepted, status: 'PEND' },
      { ...accepted, status: 'acep' },
      { ...accepted, transactionIdDebit: undefined },
      { ...accepted, transactionIdDebit: '9001' },
      { ...accepted, bankBatchId: '778' },
      { ...accepted, batchDetailId: 12 },
      { ...accepted, batchId: '' },
      { ...accepted, descriptionStatus: 5 },
    ];
    for (const body of bodies) expectProblem(readStatusNotification(body));
  });
});

describe('dates and text', () => {
  it('formats dueDate in SERVICE_TIMEZONE and path dates as yyyyMMdd', () => {
    expect(wireDateOf(new Date('2026-11-28T03:30:00Z'), ZONE)).toBe('2026-11-27');
    expect(wirePathDate('2026-11-27')).toBe('20261127');
    expect(() => wirePathDate('2026-02-30')).toThrow();
    expect(() => wirePathDate('20261127')).toThrow();
  });

  it('cleans the bank\'s texts: control and bidi characters out, long ones cut', () => {
    expect(cleanBankText('Cuenta\r\ncerrada\u0007 \u202e')).toBe('Cuenta cerrada');
    expect(cleanBankText('x'.repeat(300))).toHaveLength(200);
    expect(cleanBankText(`${'x'.repeat(198)}😀😀`, 200)).toBe(`${'x'.repeat(198)}…`);
  });
});
