// Standard Webhooks signing (docs/api-reference.md#deliveries-and-signatures, https://www.standardwebhooks.com): secrets are `whsec_` + base64
// of 32 random bytes; a signature is `v1,` + base64 HMAC-SHA256 of `${id}.${timestamp}.${body}` keyed with
// the base64-decoded secret. During a rotation both secrets sign, space-separated, so receivers that
// still hold the previous secret keep verifying.
import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/** How long the previous secret keeps signing after a rotation (docs/api-reference.md#webhook-endpoints: 24 hours). */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** `v1,<base64 HMAC>` of one message with one secret. */
export function signatureOf(secret: string, webhookId: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  const digest = createHmac('sha256', key).update(`${webhookId}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${digest}`;
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** The three Standard Webhooks headers of one attempt, signed with every secret given (current first). */
export function signedHeaders(secrets: string[], webhookId: string, sentAt: Date, body: string): SignedHeaders {
  const timestampSeconds = Math.floor(sentAt.getTime() / 1000);
  return {
    'webhook-id': webhookId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((secret) => signatureOf(secret, webhookId, timestampSeconds, body)).join(' '),
  };
}
