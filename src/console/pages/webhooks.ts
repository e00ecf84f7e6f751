// The owner's webhook endpoints (docs/console.md#keys-webhooks-and-events; contract §13): list, create (its
// signing secret shown once), rotate the secret (the new one shown once; the previous keeps signing for its
// overlap, as the API's rotate-secret does), disable or enable (the API's PATCH), delete after a
// confirmation (the API's DELETE). The owner is the session's merchant; another merchant's endpoint is not
// found (404). A URL is checked by the API's own rule (webhooks/service.ts urlFieldError with the service's
// destination policy), so the console accepts exactly what the API accepts.
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { EVENT_TYPES, type EventOwner } from '../../events/service.ts';
import { isUuidV4 } from '../../idempotency/service.ts';
import { ApiError, type FieldError } from '../../kernel/errors.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import type { App } from '../../kernel/routes.ts';
import { isStorableText } from '../../kernel/validation.ts';
import { MAX_URL_LENGTH } from '../../webhooks/schemas.ts';
import * as webhooks from '../../webhooks/service.ts';
import { destinationPolicyOf } from '../../webhooks/ssrf.ts';
import { createEndpointOnce, rotateSecretOnce } from '../developers.ts';
import type { FormErrors } from './forms.ts';
import { csrfOf, sessionOf } from './guard.ts';
import { foundOrNull, type ConsoleKit } from './kit.ts';
import { consoleNotice } from './layout.ts';
import { newChargeKey as newFormKey } from './terminal-form.ts';
import { eventFieldName, renderDeleteEndpointPage, renderSecretPage, renderWebhooksPage, type EndpointField } from './webhooks-view.ts';

const hidden = { tags: ['hosted pages'], hide: true };
const EndpointParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
const WebhooksQuery = Type.Object({ done: Type.Optional(Type.String({ maxLength: 16 })) });
const DONE = { disabled: 'console.webhooks.done.disabled', enabled: 'console.webhooks.done.enabled', deleted: 'console.webhooks.done.deleted' } as const;

/** A posted field as text ('' when missing). */
function field(body: unknown, name: string): string {
  const value = (body as Record<string, unknown> | null | undefined)?.[name];
  return typeof value === 'string' ? value : '';
}

/** The session merchant as the webhooks capability's owner. */
export function merchantOwner(request: FastifyRequest): EventOwner {
  return { kind: 'merchant', businessCode: sessionOf(request).businessCode };
}

interface EndpointForm {
  url: string;
  events: string[];
  key: string;
}

/** The create form: a URL the API would take, and the events ticked ("every event" alone when it is ticked). */
function readEndpointForm(body: unknown, locale: Locale, check: (url: string) => FieldError | null): { values: EndpointForm; errors: FormErrors<EndpointField> } {
  const url = field(body, 'url').trim();
  const ticked = ['*', ...EVENT_TYPES].filter((type) => field(body, eventFieldName(type)) === type);
  const events = ticked.includes('*') ? ['*'] : ticked;
  const values = { url, events, key: field(body, 'idempotency_key').trim().toLowerCase() };
  const errors: FormErrors<EndpointField> = {};
  if (!isStorableText(url)) errors.url = locale.t('common.unstorable');
  else if (url === '' || url.length > MAX_URL_LENGTH) errors.url = locale.t('console.webhooks.error.url_format', { max: MAX_URL_LENGTH });
  else {
    const problem = check(url);
    if (problem) {
      errors.url = problem.code === 'invalid_format' ? locale.t('console.webhooks.error.url_format', { max: MAX_URL_LENGTH })
        : problem.message.includes('https') ? locale.t('console.webhooks.error.url_https')
        : locale.t('console.webhooks.error.url_private');
    }
  }
  if (events.length === 0) errors.events = locale.t('console.webhooks.error.events');
  if (!isUuidV4(values.key)) errors._form = locale.t('console.error.form_key');
  return { values, errors };
}

export function webhookRoutes(app: App, kit: ConsoleKit): void {
  const context = kit.context;
  const { db, clock, config } = context;
  const destinations = destinationPolicyOf(config);

  const webhooksPage = async (request: FastifyRequest, reply: FastifyReply, status: number,
    form: { url: string; events: string[]; errors: FormErrors<EndpointField>; alert?: string } = { url: '', events: ['*'], errors: {} }, notice: string | null = null) => {
    const session = sessionOf(request);
    const { items } = await webhooks.listEndpoints(db, merchantOwner(request), { page: 1, perPage: webhooks.MAX_ENDPOINTS_PER_OWNER });
    return kit.send(request, reply, status, (locale, nonce) => renderWebhooksPage({
      locale, nonce, session, csrf: csrfOf(request), endpoints: items, max: webhooks.MAX_ENDPOINTS_PER_OWNER, notice,
      form: { ...form, key: newFormKey() },
    }), '/console/webhooks');
  };

  const notFound = (request: FastifyRequest, reply: FastifyReply) =>
    kit.send(request, reply, 404, (locale, nonce) => consoleNotice(locale, nonce, 'console.not_found.title', 'console.webhooks.not_found', { href: '/console/webhooks', label: 'console.webhooks.back' }, 'not-found'), null);

  /** `work`, with the 404 of an endpoint that is not the merchant's as the console's not-found page. */
  const orNotFound = async (request: FastifyRequest, reply: FastifyReply, work: () => Promise<FastifyReply>) =>
    (await foundOrNull(work)) ?? notFound(request, reply);

  app.get('/console/webhooks', { schema: { ...hidden, querystring: WebhooksQuery, summary: 'Console: the business\'s webhook endpoints (HTML)' }, config: kit.route('owner') }, (request, reply) => {
    const done = request.query.done;
    const notice = done !== undefined && done in DONE ? kit.localeOf(request).t(DONE[done as keyof typeof DONE]) : null;
    return webhooksPage(request, reply, 200, undefined, notice);
  });

  app.post('/console/webhooks', { schema: { ...hidden, summary: 'Console: add a webhook endpoint (its secret shown once)' }, config: kit.route('owner') }, async (request, reply) => {
    const session = sessionOf(request);
    const locale = kit.localeOf(request);
    const { values, errors } = readEndpointForm(request.body, locale, (url) => webhooks.urlFieldError(url, destinations));
    if (Object.keys(errors).length > 0) return webhooksPage(request, reply, 422, { url: values.url, events: values.events, errors, alert: errors._form });
    let made: Awaited<ReturnType<typeof createEndpointOnce>>;
    try {
      made = await createEndpointOnce(context, session.businessCode, { url: values.url, events: values.events }, destinations, values.key);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      // The URL passed the API's check above: a refusal now is the cap on endpoints, or the form's key reused.
      const alert = error.code === 'VALIDATION_FAILED' ? locale.t('console.webhooks.error.too_many', { max: webhooks.MAX_ENDPOINTS_PER_OWNER })
        : error.code === 'IDEMPOTENCY_KEY_REUSED' ? locale.t('console.error.form_key') : null;
      if (alert === null) throw error;
      return webhooksPage(request, reply, 422, { url: values.url, events: values.events, errors: {}, alert });
    }
    // Shown once: no language switch (reading the page again would need the secret again).
    return kit.send(request, reply, made.fresh ? 201 : 200, (locale, nonce) => renderSecretPage({
      locale, nonce, session, csrf: csrfOf(request), url: made.made.url, secret: made.fresh ? made.secret : null, previousUntil: null, rotated: false,
    }), null);
  });

  app.post('/console/webhooks/:id/rotate', { schema: { ...hidden, params: EndpointParams, summary: 'Console: rotate an endpoint\'s signing secret (shown once)' }, config: kit.route('owner') }, (request, reply) =>
    orNotFound(request, reply, async () => {
      const formKey = field(request.body, 'idempotency_key').trim().toLowerCase();
      // A form without its key is not sent blindly: the list comes back, with fresh keys, to press again.
      if (!isUuidV4(formKey)) return webhooksPage(request, reply, 422, { url: '', events: ['*'], errors: {}, alert: kit.localeOf(request).t('console.error.form_key') });
      let made: Awaited<ReturnType<typeof rotateSecretOnce>>;
      try {
        made = await rotateSecretOnce(context, sessionOf(request).businessCode, request.params.id, formKey);
      } catch (error) {
        if (!(error instanceof ApiError) || error.code !== 'IDEMPOTENCY_KEY_REUSED') throw error;
        return webhooksPage(request, reply, 422, { url: '', events: ['*'], errors: {}, alert: kit.localeOf(request).t('console.error.form_key') });
      }
      return kit.send(request, reply, 200, (locale, nonce) => renderSecretPage({
        locale, nonce, session: sessionOf(request), csrf: csrfOf(request), url: made.made.url, secret: made.fresh ? made.secret : null,
        previousUntil: made.made.previousUntil, rotated: true,
      }), null);
    }));

  app.post('/console/webhooks/:id/status', { schema: { ...hidden, params: EndpointParams, summary: 'Console: disable or enable an endpoint' }, config: kit.route('owner') }, (request, reply) =>
    orNotFound(request, reply, async () => {
      const status = field(request.body, 'status');
      if (status !== 'enabled' && status !== 'disabled') return webhooksPage(request, reply, 422, undefined, null);
      await webhooks.updateEndpoint(db, merchantOwner(request), request.params.id, { status }, destinations, clock.now());
      return kit.redirect(request, reply, `/console/webhooks?done=${status}`);
    }));

  app.get('/console/webhooks/:id/delete', { schema: { ...hidden, params: EndpointParams, summary: 'Console: confirm the delete of an endpoint (HTML)' }, config: kit.route('owner') }, (request, reply) =>
    orNotFound(request, reply, async () => {
      const endpoint = await webhooks.getEndpoint(db, merchantOwner(request), request.params.id);
      return kit.send(request, reply, 200, (locale, nonce) => renderDeleteEndpointPage({ locale, nonce, session: sessionOf(request), csrf: csrfOf(request), endpoint }),
        `/console/webhooks/${encodeURIComponent(endpoint.id)}/delete`);
    }));

  app.post('/console/webhooks/:id/delete', { schema: { ...hidden, params: EndpointParams, summary: 'Console: delete an endpoint' }, config: kit.route('owner') }, (request, reply) =>
    orNotFound(request, reply, async () => {
      await webhooks.deleteEndpoint(db, merchantOwner(request), request.params.id, clock.now());
      return kit.redirect(request, reply, '/console/webhooks?done=deleted');
    }));
}
