// The owner's API keys page (docs/console.md#keys-webhooks-and-events): the business's keys by their prefix
// (never the key), the form to create a merchant or a terminal key, the new key shown once, and the step that
// confirms a revocation.
import { escapeHtml } from '../../kernel/html.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import { modeOfKeyPrefix } from '../../merchants/keys.ts';
import { keyKindOf, type ApiKeyRow, type MerchantKeyKind } from '../../merchants/service.ts';
import { csrfField, formAlert, type Framed, framedPage } from './layout.ts';
import { choiceField, shownOnce } from './lists.ts';

const frame = (framed: Framed, title: string, body: string) => framedPage(framed, '/console/keys', title, body);

function kindLabel(locale: Locale, key: ApiKeyRow): string {
  return keyKindOf(key) === 'terminal' ? locale.t('console.keys.kind.terminal') : locale.t('console.keys.kind.merchant');
}

function keyRow(locale: Locale, key: ApiKeyRow): string {
  const mode = modeOfKeyPrefix(key.key_prefix) === 'live' ? locale.t('console.keys.mode.live') : locale.t('console.keys.mode.sandbox');
  const used = key.last_used_at ? locale.t('console.keys.last_used', { when: locale.dateTime(key.last_used_at) }) : locale.t('console.keys.never_used');
  const state = key.revoked_at
    ? `<span data-field="state" data-state="revoked">${locale.html('console.keys.revoked', { when: locale.dateTime(key.revoked_at) })}</span>`
    : `<span data-field="state" data-state="live">${locale.html('console.keys.live')}</span>`;
  const revoke = key.revoked_at ? '' : `<a class="button-link danger" href="${escapeHtml(locale.href(`/console/keys/${encodeURIComponent(key.key_prefix)}/revoke`))}"
      aria-label="${escapeHtml(locale.t('console.keys.revoke_label', { prefix: key.key_prefix }))}">${locale.html('console.keys.revoke')}</a>`;
  return `<li class="row" data-key="${escapeHtml(key.key_prefix)}">
    <div class="what"><p><strong class="code">${escapeHtml(key.key_prefix)}…</strong></p>
    <p class="hint"><span data-field="kind">${escapeHtml(kindLabel(locale, key))}</span> · ${escapeHtml(mode)} · ${state}</p>
    <p class="hint">${locale.html('console.keys.created', { when: locale.dateTime(key.created_at) })} · ${escapeHtml(used)}</p></div>
    ${revoke}
  </li>`;
}

export interface KeysPage extends Framed {
  keys: readonly ApiKeyRow[];
  form: { kind: MerchantKeyKind; key: string; alert?: string };
}

export function renderKeysPage(page: KeysPage): string {
  const { locale, csrf, keys, form } = page;
  const body = `<section class="card" aria-labelledby="keys-heading">
  <h1 id="keys-heading">${locale.html('console.keys.title')}</h1>
  <p class="hint">${locale.html('console.keys.text')}</p>
  ${keys.length === 0 ? `<p>${locale.html('console.keys.none')}</p>` : `<ul class="rows" id="keys">
  ${keys.map((key) => keyRow(locale, key)).join('\n  ')}
  </ul>`}
</section>
<section class="card" aria-labelledby="new-key-heading">
  <h2 id="new-key-heading">${locale.html('console.keys.new.heading')}</h2>
  ${formAlert(form.alert)}
  <form method="post" action="${escapeHtml(locale.href('/console/keys'))}" id="new-key-form">
  ${csrfField(csrf)}
  <input type="hidden" name="idempotency_key" value="${escapeHtml(form.key)}">
  ${choiceField({
    name: 'kind', legend: locale.t('console.keys.new.kind'), type: 'radio', chosen: [form.kind],
    options: [
      { value: 'merchant', label: locale.t('console.keys.kind.merchant'), hint: locale.t('console.keys.kind.merchant.hint') },
      { value: 'terminal', label: locale.t('console.keys.kind.terminal'), hint: locale.t('console.keys.kind.terminal.hint') },
    ],
  })}
  <button type="submit" id="new-key-button">${locale.html('console.keys.new.submit')}</button>
  </form>
</section>`;
  return frame(page, locale.t('console.keys.title'), body);
}

export interface KeyMadePage extends Framed {
  kind: MerchantKeyKind;
  keyPrefix: string;
  /** The whole key, on the answer that made it; null when the form had been sent already. */
  secret: string | null;
}

/** The new key, shown this once (the answer to the create form); or, for a second submit, which key the form made. */
export function renderKeyMadePage(page: KeyMadePage): string {
  const { locale, kind, keyPrefix, secret } = page;
  const back = `<a class="button-link" href="${escapeHtml(locale.href('/console/keys'))}" id="keys-back">${locale.html('console.keys.back')}</a>`;
  const body = secret !== null
    ? `${shownOnce(locale, {
      heading: locale.t('console.keys.made.title'),
      text: locale.t(kind === 'terminal' ? 'console.keys.made.terminal' : 'console.keys.made.merchant'),
      value: secret, id: 'new-key',
    })}
<section class="card" aria-labelledby="key-warning-heading">
  <h2 id="key-warning-heading">${locale.html('console.keys.made.warning.heading')}</h2>
  <p>${locale.html('console.keys.made.warning')}</p>
  ${back}
</section>`
    : `<section class="card" aria-labelledby="key-again-heading">
  <h1 id="key-again-heading">${locale.html('console.keys.again.title')}</h1>
  <p>${locale.html('console.keys.again.text', { prefix: keyPrefix })}</p>
  ${back}
</section>`;
  return frame(page, locale.t(secret !== null ? 'console.keys.made.title' : 'console.keys.again.title'), body);
}

export interface RevokeKeyPage extends Framed {
  key: ApiKeyRow;
}

/** The step before a revocation: which key, what stops working, and the button that does it. */
export function renderRevokeKeyPage(page: RevokeKeyPage): string {
  const { locale, csrf, key } = page;
  const body = `<section class="card" aria-labelledby="revoke-heading">
  <h1 id="revoke-heading">${locale.html('console.keys.revoke.title', { prefix: key.key_prefix })}</h1>
  <p>${locale.html('console.keys.revoke.text', { kind: kindLabel(locale, key) })}</p>
  <form method="post" action="${escapeHtml(locale.href(`/console/keys/${encodeURIComponent(key.key_prefix)}/revoke`))}" id="revoke-form">
  ${csrfField(csrf)}
  <button type="submit" class="danger" id="revoke-button">${locale.html('console.keys.revoke.submit', { prefix: key.key_prefix })}</button>
  </form>
  <a class="button-link secondary" href="${escapeHtml(locale.href('/console/keys'))}">${locale.html('console.keys.revoke.cancel')}</a>
</section>`;
  return frame(page, locale.t('console.keys.revoke.title', { prefix: key.key_prefix }), body);
}
