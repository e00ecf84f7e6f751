// The owner's API keys (docs/console.md#keys-webhooks-and-events; contract §13): list them by prefix, create a
// merchant key or a terminal key (the key shown once, on the answer), revoke one after a confirmation. Every
// read and write is the session merchant's: another merchant's key prefix is not found (404) and stays live.
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isUuidV4 } from '../../idempotency/service.ts';
import { ApiError } from '../../kernel/errors.ts';
import type { App } from '../../kernel/routes.ts';
import * as merchants from '../../merchants/service.ts';
import { createKeyOnce } from '../developers.ts';
import { csrfOf, sessionOf } from './guard.ts';
import { foundOrNull, type ConsoleKit } from './kit.ts';
import { consoleNotice } from './layout.ts';
import { newChargeKey as newFormKey } from './terminal-form.ts';
import { renderKeyMadePage, renderKeysPage, renderRevokeKeyPage } from './keys-view.ts';

const hidden = { tags: ['hosted pages'], hide: true };
const KeyParams = Type.Object({ prefix: Type.String({ maxLength: 64 }) });

/** A posted field as text ('' when missing or repeated). */
function field(body: unknown, name: string): string {
  const value = (body as Record<string, unknown> | null | undefined)?.[name];
  return typeof value === 'string' ? value : '';
}

export function keyRoutes(app: App, kit: ConsoleKit): void {
  const context = kit.context;
  const { db, clock } = context;

  const keysPage = async (request: FastifyRequest, reply: FastifyReply, status: number, form: { kind: merchants.MerchantKeyKind; alert?: string } = { kind: 'merchant' }) => {
    const session = sessionOf(request);
    const keys = await merchants.listMerchantApiKeys(db, session.businessCode);
    // Newest first, the live ones before the revoked.
    const shown = [...keys].sort((a, b) => Number(a.revoked_at !== null) - Number(b.revoked_at !== null) || b.created_at.getTime() - a.created_at.getTime() || b.id - a.id);
    return kit.send(request, reply, status, (locale, nonce) => renderKeysPage({ locale, nonce, session, csrf: csrfOf(request), keys: shown, form: { ...form, key: newFormKey() } }), '/console/keys');
  };

  const notFound = (request: FastifyRequest, reply: FastifyReply) =>
    kit.send(request, reply, 404, (locale, nonce) => consoleNotice(locale, nonce, 'console.not_found.title', 'console.keys.not_found', { href: '/console/keys', label: 'console.keys.back' }, 'not-found'), null);

  app.get('/console/keys', { schema: { ...hidden, summary: 'Console: the business\'s API keys (HTML)' }, config: kit.route('owner') }, (request, reply) => keysPage(request, reply, 200));

  app.post('/console/keys', { schema: { ...hidden, summary: 'Console: create a merchant or terminal API key (shown once)' }, config: kit.route('owner') }, async (request, reply) => {
    const session = sessionOf(request);
    const locale = kit.localeOf(request);
    const kindText = field(request.body, 'kind');
    const formKey = field(request.body, 'idempotency_key').trim().toLowerCase();
    if (kindText !== 'merchant' && kindText !== 'terminal') return keysPage(request, reply, 422, { kind: 'merchant', alert: locale.t('console.keys.error.kind') });
    // A form without its key (or with one altered) is not sent again blindly: the page comes back with a new key.
    if (!isUuidV4(formKey)) return keysPage(request, reply, 422, { kind: kindText, alert: locale.t('console.error.form_key') });
    let made: Awaited<ReturnType<typeof createKeyOnce>>;
    try {
      made = await createKeyOnce(context, session.businessCode, kindText, formKey);
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'IDEMPOTENCY_KEY_REUSED') throw error;
      return keysPage(request, reply, 422, { kind: kindText, alert: locale.t('console.error.form_key') });
    }
    // Shown once: no language switch (reading the page again would need the key again).
    return kit.send(request, reply, made.fresh ? 201 : 200, (locale, nonce) => renderKeyMadePage({
      locale, nonce, session, csrf: csrfOf(request), kind: made.made.kind, keyPrefix: made.made.keyPrefix, secret: made.fresh ? made.secret : null,
    }), null);
  });

  app.get('/console/keys/:prefix/revoke', { schema: { ...hidden, params: KeyParams, summary: 'Console: confirm the revocation of an API key (HTML)' }, config: kit.route('owner') }, async (request, reply) => {
    const session = sessionOf(request);
    const key = (await merchants.listMerchantApiKeys(db, session.businessCode)).find((row) => row.key_prefix === request.params.prefix && row.revoked_at === null);
    if (!key) return notFound(request, reply);
    return kit.send(request, reply, 200, (locale, nonce) => renderRevokeKeyPage({ locale, nonce, session, csrf: csrfOf(request), key }), `/console/keys/${encodeURIComponent(key.key_prefix)}/revoke`);
  });

  app.post('/console/keys/:prefix/revoke', { schema: { ...hidden, params: KeyParams, summary: 'Console: revoke an API key of the business' }, config: kit.route('owner') }, async (request, reply) => {
    const revoked = await foundOrNull(() => merchants.revokeMerchantApiKey(db, sessionOf(request).businessCode, request.params.prefix, clock.now()));
    if (!revoked) return notFound(request, reply);
    return kit.redirect(request, reply, '/console/keys');
  });
}
