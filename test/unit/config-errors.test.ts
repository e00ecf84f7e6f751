import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';

describe('configuration errors', () => {
  it.each([
    ['ADMIN_TOKEN', 'short'],
    ['RATE_LIMIT', 'fast'],
    ['SANDBOX_SETTLEMENT', 'soon'],
    ['BANKS_FILE', '/nonexistent/banks.json'],
  ])('a wrong %s is a ConfigError naming the variable, not a crash', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^${name}=`));
  });
});
