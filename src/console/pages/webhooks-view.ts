// The owner's webhook endpoints page (docs/console.md#keys-webhooks-and-events): the business's endpoints (URL,
// state, events, created) with rotate, disable or enable, and delete (after a confirmation); the form to add
// one; its signing secret shown once, on create and on rotate.
import { escapeHtml } from '../../kernel/html.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import { EVENT_TYPES } from '../../events/service.ts';
import type { EndpointRow } from '../../webhooks/service.ts';
import type { FormErrors } from './forms.ts';
import { newChargeKey as newFormKey } from './terminal-form.ts';
import { csrfField, formAlert, type Framed, framedPage, inputField } from './layout.ts';
import { choiceField, doneNotice, shownOnce } from './lists.ts';

const frame = (framed: Framed, title: string, body: string) => framedPage(framed, '/console/webhooks', title, body);

/** The form field of one event type's checkbox (`event:*` for every event). */
export function eventFieldName(type: string): string {
  return `event:${type}`;
}

/** An endpoint's events as a person reads them: "every event", or the types. */
export function eventsText(locale: Locale, types: readonly string[]): string {
  return types.includes('*') ? locale.t('console.webhooks.all_events') : types.join(', ');
}

function endpointRow(locale: Locale, endpoint: EndpointRow, csrf: string): string {
  const base = `/console/webhooks/${encodeURIComponent(endpoint.id)}`;
  const enabled = endpoint.status === 'enabled';
  const post = (path: string, label: string, aria: string, extra = '', cls = 'secondary') => `<form method="post" action="${escapeHtml(locale.href(`${base}/${path}`))}">
      ${csrfField(csrf)}${extra}
      <button type="submit" class="${cls}" aria-label="${escapeHtml(aria)}">${escapeHtml(label)}</button>
      </form>`;
  return `<li class="row" data-endpoint="${escapeHtml(endpoint.id)}">
    <div class="what"><p><strong class="code">${escapeHtml(endpoint.url)}</strong></p>
    <p class="hint"><span data-field="status" data-state="${endpoint.status}">${locale.html(enabled ? 'console.webhooks.enabled' : 'console.webhooks.disabled')}</span>
      · ${locale.html('console.keys.created', { when: locale.dateTime(endpoint.created_at) })}</p>
    <p class="hint" data-field="events">${escapeHtml(eventsText(locale, endpoint.event_types))}</p></div>
    <div class="actions">
      ${post('rotate', locale.t('console.webhooks.rotate'), locale.t('console.webhooks.rotate_label', { url: endpoint.url }), `<input type="hidden" name="idempotency_key" value="${escapeHtml(newFormKey())}">`)}
      ${post('status', locale.t(enabled ? 'console.webhooks.disable' : 'console.webhooks.enable'),
        locale.t(enabled ? 'console.webhooks.disable_label' : 'console.webhooks.enable_label', { url: endpoint.url }),
        `<input type="hidden" name="status" value="${enabled ? 'disabled' : 'enabled'}">`)}
      <a class="button-link danger" href="${escapeHtml(locale.href(`${base}/delete`))}" aria-label="${escapeHtml(locale.t('console.webhooks.delete_label', { url: endpoint.url }))}">${locale.html('console.webhooks.delete')}</a>
    </div>
  </li>`;
}

export type EndpointField = 'url' | 'events';

export interface WebhooksPage extends Framed {
  endpoints: readonly EndpointRow[];
  max: number;
  notice: string | null;
  form: { url: string; events: readonly string[]; key: string; errors: FormErrors<EndpointField>; alert?: string };
}

export function renderWebhooksPage(page: WebhooksPage): string {
  const { locale, csrf, endpoints, form } = page;
  const body = `${doneNotice(page.notice)}<section class="card" aria-labelledby="webhooks-heading">
  <h1 id="webhooks-heading">${locale.html('console.webhooks.title')}</h1>
  <p class="hint">${locale.html('console.webhooks.text', { max: page.max })}</p>
  ${endpoints.length === 0 ? `<p>${locale.html('console.webhooks.none')}</p>` : `<ul class="rows" id="endpoints">
  ${endpoints.map((endpoint) => endpointRow(locale, endpoint, csrf)).join('\n  ')}
  </ul>`}
</section>
<section class="card" aria-labelledby="new-endpoint-heading">
  <h2 id="new-endpoint-heading">${locale.html('console.webhooks.new.heading')}</h2>
  ${formAlert(form.alert)}
  <form method="post" action="${escapeHtml(locale.href('/console/webhooks'))}" novalidate id="new-endpoint-form">
  ${csrfField(csrf)}
  <input type="hidden" name="idempotency_key" value="${escapeHtml(form.key)}">
  ${inputField({ name: 'url', label: locale.t('console.webhooks.field.url'), attributes: 'type="url" inputmode="url" autocomplete="off" maxlength="2048" required', value: form.url, hint: locale.t('console.webhooks.field.url.hint'), error: form.errors.url, autofocus: form.errors.url !== undefined })}
  ${choiceField({
    name: 'events', legend: locale.t('console.webhooks.field.events'), type: 'checkbox', chosen: form.events, error: form.errors.events,
    options: [{ value: '*', label: locale.t('console.webhooks.all_events') }, ...EVENT_TYPES].map((option) => typeof option === 'string'
      ? { value: option, label: option, name: eventFieldName(option) }
      : { ...option, name: eventFieldName(option.value) }),
  })}
  <button type="submit" id="new-endpoint-button">${locale.html('console.webhooks.new.submit')}</button>
  </form>
</section>`;
  return frame(page, locale.t('console.webhooks.title'), body);
}

export interface SecretPage extends Framed {
  url: string;
  /** The signing secret in clear, this once; null when the form had been sent already (it made the endpoint then). */
  secret: string | null;
  /** Rotated: until when the previous secret keeps signing; null on create (or when it stopped at once). */
  previousUntil: Date | null;
  rotated: boolean;
}

/** A signing secret shown once: a new endpoint's, or the new one of a rotation (the previous one's overlap said). */
export function renderSecretPage(page: SecretPage): string {
  const { locale, url, secret, previousUntil, rotated } = page;
  const back = `<a class="button-link" href="${escapeHtml(locale.href('/console/webhooks'))}" id="webhooks-back">${locale.html('console.webhooks.back')}</a>`;
  const title = locale.t(secret === null ? (rotated ? 'console.webhooks.rotated_again.title' : 'console.webhooks.again.title') : rotated ? 'console.webhooks.rotated.title' : 'console.webhooks.made.title');
  if (secret === null) {
    return frame(page, title, `<section class="card" aria-labelledby="again-heading">
  <h1 id="again-heading">${escapeHtml(title)}</h1>
  <p>${locale.html(rotated ? 'console.webhooks.rotated_again.text' : 'console.webhooks.again.text', { url })}</p>
  ${back}
</section>`);
  }
  const body = `${shownOnce(locale, {
    heading: title,
    text: locale.t(rotated ? 'console.webhooks.rotated.text' : 'console.webhooks.made.text', { url }),
    value: secret, id: 'signing-secret',
  })}
<section class="card" aria-labelledby="secret-next-heading">
  <h2 id="secret-next-heading">${locale.html('console.webhooks.secret.next')}</h2>
  <p>${locale.html('console.webhooks.secret.verify')}</p>
  ${previousUntil ? `<p id="overlap">${locale.html('console.webhooks.rotated.overlap', { until: locale.dateTime(previousUntil) })}</p>` : ''}
  ${back}
</section>`;
  return frame(page, title, body);
}

export interface DeleteEndpointPage extends Framed {
  endpoint: EndpointRow;
}

/** The step before a delete: which endpoint, what stops, and the button that does it. */
export function renderDeleteEndpointPage(page: DeleteEndpointPage): string {
  const { locale, csrf, endpoint } = page;
  const body = `<section class="card" aria-labelledby="delete-heading">
  <h1 id="delete-heading">${locale.html('console.webhooks.delete.title')}</h1>
  <p class="code">${escapeHtml(endpoint.url)}</p>
  <p>${locale.html('console.webhooks.delete.text')}</p>
  <form method="post" action="${escapeHtml(locale.href(`/console/webhooks/${encodeURIComponent(endpoint.id)}/delete`))}" id="delete-form">
  ${csrfField(csrf)}
  <button type="submit" class="danger" id="delete-button">${locale.html('console.webhooks.delete.submit')}</button>
  </form>
  <a class="button-link secondary" href="${escapeHtml(locale.href('/console/webhooks'))}">${locale.html('console.keys.revoke.cancel')}</a>
</section>`;
  return frame(page, locale.t('console.webhooks.delete.title'), body);
}
