import { describe, expect, it } from 'vitest';
import { centavos } from '../../src/money.ts';
import { buildEmvPayload, crc16CcittFalse, parseTlv, tlv, toEmvText } from '../../src/qr/emv.ts';

const base = {
  isMultiUse: false, qrUrl: 'https://pay.example.com/pay/AbCdEfGhIjKlMnOpQrStUv', payToken: 'AbCdEfGhIjKlMnOpQrStUv',
  mcc: '5999', amountCentavos: centavos(15050), merchantName: 'Tienda Pérez', merchantCity: 'La Paz',
};

describe('EMV payload', () => {
  it('computes CRC16/CCITT-FALSE (check value of "123456789" is 29B1)', () => {
    expect(crc16CcittFalse('123456789')).toBe('29B1');
    expect(crc16CcittFalse('')).toBe('FFFF');
  });

  it('writes the fields in ascending tag order with two-digit lengths', () => {
    const payload = buildEmvPayload(base);
    expect(payload).toBe(
      '000201' + '010212' + tlv('26', tlv('00', 'bo.mps') + tlv('01', base.qrUrl)) + '52045999' + '5303068' + '5406150.50' +
      '5802BO' + '5912Tienda Perez' + '6006La Paz' + tlv('62', tlv('05', base.payToken)) + '6304' + crc16CcittFalse(payload.slice(0, -4)),
    );
  });

  it('puts only the token in tag 26 when qr_url is longer than 85 characters', () => {
    const longUrl = `https://${'a'.repeat(60)}.example.com/pay/${base.payToken}`;
    const fields = parseTlv(buildEmvPayload({ ...base, qrUrl: longUrl }));
    const account = parseTlv(fields.find((f) => f.tag === '26')!.value);
    expect(account).toEqual([{ tag: '00', value: 'bo.mps' }, { tag: '01', value: base.payToken }]);
    const exact = `https://x.example/${'p'.repeat(85 - 18)}`;
    expect(exact).toHaveLength(85);
    expect(parseTlv(parseTlv(buildEmvPayload({ ...base, qrUrl: exact })).find((f) => f.tag === '26')!.value)[1]!.value).toBe(exact);
  });

  it('formats amounts with two decimals and leaves tag 54 out for editable amounts', () => {
    expect(parseTlv(buildEmvPayload({ ...base, amountCentavos: centavos(10) })).find((f) => f.tag === '54')!.value).toBe('0.10');
    expect(parseTlv(buildEmvPayload({ ...base, amountCentavos: centavos(10_000_000) })).find((f) => f.tag === '54')!.value).toBe('100000.00');
    expect(parseTlv(buildEmvPayload({ ...base, amountCentavos: null })).some((f) => f.tag === '54')).toBe(false);
  });

  it('transliterates names and cities to ASCII and cuts them', () => {
    expect(toEmvText('Pérez', 25, 'x')).toBe('Perez');
    expect(toEmvText('Ñandú Çañón Straße', 25, 'x')).toBe('Nandu Canon Strasse');
    expect(toEmvText('¡Café  «Ñ»!', 25, 'x')).toBe('Cafe N!');
    expect(toEmvText('Cochabamba de los Andes', 15, 'x')).toBe('Cochabamba de l');
    expect(toEmvText('Santa Cruz de la Sierra', 15, 'x')).toBe('Santa Cruz de l');
    expect(toEmvText('東京', 25, 'Merchant')).toBe('Merchant');
    expect(toEmvText('abcdefghijklmn p', 15, 'x')).toBe('abcdefghijklmn'); // no trailing space after the cut
  });

  it('refuses a field longer than 99 characters', () => {
    expect(() => tlv('59', 'x'.repeat(100))).toThrow(RangeError);
  });
});
