import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { newWebhookSecret, signatureOf, signedHeaders } from '../../src/webhooks/signing.ts';

describe('Standard Webhooks signing', () => {
  it('makes secrets of whsec_ and base64 of 32 random bytes, all different', () => {
    const secrets = new Set(Array.from({ length: 50 }, newWebhookSecret));
    expect(secrets.size).toBe(50);
    for (const secret of secrets) {
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    }
  });

  it('signs exactly as the public standardwebhooks library does, for any id, time and body', () => {
    for (let i = 0; i < 200; i++) {
      const secret = newWebhookSecret();
      const id = `evt_${randomBytes(12).toString('hex')}`;
      const at = new Date(1_700_000_000_000 + Math.floor(Math.random() * 1e11));
      const body = JSON.stringify({ n: i, text: randomBytes(20).toString('base64'), accents: 'Pérez ñandú €' });
      expect(signatureOf(secret, id, Math.floor(at.getTime() / 1000), body)).toBe(new Webhook(secret).sign(id, at, body));
    }
  });

  it('puts one signature per secret, space-separated, current secret first', () => {
    const [current, previous] = [newWebhookSecret(), newWebhookSecret()];
    const headers = signedHeaders([current, previous], 'evt_x', new Date('2026-11-22T16:00:00.900Z'), '{}');
    expect(headers['webhook-timestamp']).toBe(String(Date.parse('2026-11-22T16:00:00Z') / 1000));
    const [first, second] = headers['webhook-signature'].split(' ');
    expect(first).toBe(signatureOf(current, 'evt_x', Number(headers['webhook-timestamp']), '{}'));
    expect(second).toBe(signatureOf(previous, 'evt_x', Number(headers['webhook-timestamp']), '{}'));
  });
});
