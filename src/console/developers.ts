// The owner's keys and webhook endpoints in the console (docs/console.md#keys-webhooks-and-events; contract §13):
// what their pages ask of the merchants and webhooks capabilities, in the console's terms. A key or an endpoint
// is made once per form: the form carries an idempotency key (minted with the page), and the work runs under
// the idempotency mechanism the API's writes use (idempotency/service.ts). Its stored outcome holds the key's
// prefix or the endpoint's id — never the secret: a second submit of the same form makes nothing and answers
// "already made" with the prefix or id, the secret having been shown on the first answer only. A rotation
// of a signing secret too: a second tap rotating again would stop the secret the receiver still uses at once.
import type { AppContext } from '../context.ts';
import { runIdempotent, type IdempotencyScope } from '../idempotency/service.ts';
import { ApiError } from '../kernel/errors.ts';
import { createMerchantApiKeyIn, type MerchantKeyKind } from '../merchants/service.ts';
import { createEndpointIn, rotateSecretIn } from '../webhooks/service.ts';
import type { DestinationPolicy } from '../webhooks/ssrf.ts';

/** The idempotency routes of the console's creates: their keys never meet the API's. */
export const CONSOLE_KEY_ROUTE = 'POST /console/keys';
export const CONSOLE_ENDPOINT_ROUTE = 'POST /console/webhooks';
export const CONSOLE_ROTATE_ROUTE = 'POST /console/webhooks/{id}/rotate';

/** How long a second submit waits for the first to finish (IDEMPOTENCY_KEY_IN_USE) before it gives up. */
const KEY_IN_USE_RETRIES = 40;
const KEY_IN_USE_PAUSE_MS = 100;

type DeveloperContext = Pick<AppContext, 'db' | 'config' | 'clock' | 'secrets'>;

/** A create of the form: made now (with its secret, this once), or made by an earlier submit of the same form. */
export type Made<T> = { fresh: true; secret: string; made: T } | { fresh: false; made: T };

function scopeOf(businessCode: number, route: string, key: string): IdempotencyScope {
  return { caller: `merchant:${businessCode}`, route, key }; // the merchant's scope, as kernel/principal.ts callerScope writes it
}

/** `work` under the form's key; a second submit still running waits for the first rather than failing. */
async function once<T>(context: DeveloperContext, scope: IdempotencyScope, request: unknown, work: Parameters<typeof runIdempotent>[4]): Promise<{ body: T; replayed: boolean }> {
  for (let attempt = 0; ; attempt++) {
    try {
      const result = await runIdempotent(context.db, scope, request, context.clock.now(), work);
      return { body: result.body as T, replayed: result.replayed };
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'IDEMPOTENCY_KEY_IN_USE' || attempt >= KEY_IN_USE_RETRIES) throw error;
      await new Promise((resolve) => setTimeout(resolve, KEY_IN_USE_PAUSE_MS));
    }
  }
}

/** A new key of the merchant (as POST /admin/v1/merchants/{code}/api-keys makes it), once per form key. */
export async function createKeyOnce(
  context: DeveloperContext, businessCode: number, kind: MerchantKeyKind, formKey: string,
): Promise<Made<{ keyPrefix: string; kind: MerchantKeyKind }>> {
  let secret: string | null = null;
  const { body, replayed } = await once<{ key_prefix: string; kind: MerchantKeyKind }>(context, scopeOf(businessCode, CONSOLE_KEY_ROUTE, formKey), { kind }, async (tx) => {
    const key = await createMerchantApiKeyIn(tx, businessCode, context.config.mode, context.clock.now(), kind);
    secret = key.apiKey;
    return { statusCode: 201, body: { key_prefix: key.keyPrefix, kind: key.kind } };
  });
  const made = { keyPrefix: body.key_prefix, kind: body.kind };
  return !replayed && secret !== null ? { fresh: true, secret, made } : { fresh: false, made };
}

/** A new webhook endpoint of the merchant (as POST /api/v2/webhook-endpoints makes it), once per form key. */
export async function createEndpointOnce(
  context: DeveloperContext, businessCode: number, settings: { url: string; events: string[] }, destinations: DestinationPolicy, formKey: string,
): Promise<Made<{ id: string; url: string }>> {
  let secret: string | null = null;
  const { body, replayed } = await once<{ id: string; url: string }>(context, scopeOf(businessCode, CONSOLE_ENDPOINT_ROUTE, formKey), settings, async (tx) => {
    const created = await createEndpointIn(tx, { kind: 'merchant', businessCode }, settings, destinations, context.clock.now(), context.secrets);
    secret = created.secret;
    return { statusCode: 201, body: { id: created.endpoint.id, url: created.endpoint.url } };
  });
  return !replayed && secret !== null ? { fresh: true, secret, made: body } : { fresh: false, made: body };
}

/**
 * A new signing secret for the merchant's endpoint (as POST /api/v2/webhook-endpoints/{id}/rotate-secret makes
 * it: the previous one keeps signing for its overlap), once per form key. Throws NOT_FOUND for another's.
 */
export async function rotateSecretOnce(
  context: DeveloperContext, businessCode: number, endpointId: string, formKey: string,
): Promise<Made<{ id: string; url: string; previousUntil: Date | null }>> {
  let secret: string | null = null;
  const { body, replayed } = await once<{ id: string; url: string; previous_until: string | null }>(
    context, scopeOf(businessCode, CONSOLE_ROTATE_ROUTE, formKey), { endpoint: endpointId }, async (tx) => {
      const rotated = await rotateSecretIn(tx, { kind: 'merchant', businessCode }, endpointId, context.clock.now(), context.secrets);
      secret = rotated.secret;
      const until = rotated.endpoint.previous_secret_expires_at;
      return { statusCode: 200, body: { id: rotated.endpoint.id, url: rotated.endpoint.url, previous_until: until ? until.toISOString() : null } };
    });
  const made = { id: body.id, url: body.url, previousUntil: body.previous_until === null ? null : new Date(body.previous_until) };
  return !replayed && secret !== null ? { fresh: true, secret, made } : { fresh: false, made };
}
