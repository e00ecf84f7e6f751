import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';

/** RAIL=baneco with every required BANECO_* variable. */
const BANECO = {
  RAIL: 'baneco', BANECO_URL: 'https://apimktdesa.baneco.com.bo/ApiGateway/', BANECO_USER: 'plataforma', BANECO_PASSWORD: 'clave-del-banco',
  BANECO_AES_KEY: '40A318B299F245C2B697176723088629', BANECO_ACCOUNT: '1041070599', BANECO_CALLBACK_SECRET: 'c'.repeat(32),
};
const ENCRYPTION_KEYS = `k1:${Buffer.alloc(32, 1).toString('base64')}`;

describe('configuration errors', () => {
  it.each([
    ['ADMIN_TOKEN', 'short'],
    ['RATE_LIMIT', 'fast'],
    ['SANDBOX_SETTLEMENT', 'soon'],
    ['BANKS_FILE', '/nonexistent/banks.json'],
    ['FEE_QR', '1.5'],
    ['FEE_TRANSFER', 'free'],
    ['PAYOUT_TIME', '6pm'],
  ])('a wrong %s is a ConfigError naming the variable, not a crash', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^${name}=`));
  });

  it.each([
    ['unset', {}],
    ['sandbox', { RAIL: 'sandbox' }],
  ])('MODE=live with RAIL %s is a ConfigError naming RAIL, not a service without a bank', (_name, rail) => {
    expect(() => loadConfig({ MODE: 'live', ENCRYPTION_KEYS, ...rail })).toThrow(ConfigError);
    expect(() => loadConfig({ MODE: 'live', ENCRYPTION_KEYS, ...rail })).toThrow(/^RAIL=sandbox .*cannot run with MODE=live; set RAIL=baneco/);
  });

  it('takes MODE=live with RAIL=baneco and its variables, and MODE=sandbox with RAIL=baneco', () => {
    expect(loadConfig({ MODE: 'live', ENCRYPTION_KEYS, ...BANECO })).toMatchObject({ mode: 'live', rail: { kind: 'baneco' } });
    expect(loadConfig(BANECO)).toMatchObject({ mode: 'sandbox', rail: { kind: 'baneco' } });
  });
});
