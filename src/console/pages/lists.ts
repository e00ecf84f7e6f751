// The pieces every owner page is made of (docs/console.md): a list's page links, a record's facts, a filter's
// select, a figure of money, and the card of a secret shown once. One of each, so the QRs, payments,
// movements, transfers, keys and webhooks pages look and read alike; every datum through escapeHtml.
import { escapeHtml } from '../../kernel/html.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import { pageMeta, PaginationQueryProperties, type Page, type PageRequest } from '../../kernel/pagination.ts';

/** The owner's lists show this many rows a page (a phone's screenful or two); `?page=` walks them. */
export const CONSOLE_PER_PAGE = 20;

/** The querystring of a console list: `page` as the API's lists take it (1–1,000,000); nothing else of paging. */
export const ConsolePageQuery = { page: PaginationQueryProperties.page };

/** The page a console list asks its service for. */
export function consolePageRequest(query: { page?: number }): PageRequest {
  return { page: query.page ?? 1, perPage: CONSOLE_PER_PAGE };
}

/** The address of `path` with `params` (empty ones left out) as its query, under the visitor's language. */
export function hrefWith(locale: Locale, path: string, params: Record<string, string | number | null | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== null && value !== undefined && value !== '') query.set(name, String(value));
  const text = query.toString();
  return locale.href(text ? `${path}?${text}` : path);
}

/**
 * The links under a list: previous, "page N of M", next. `params` are the list's filters, kept on every
 * link. Nothing when the whole list fits one page.
 */
export function pager(locale: Locale, path: string, params: Record<string, string | number | null | undefined>, request: PageRequest, page: Page<unknown>): string {
  const meta = pageMeta(page.total, request);
  if (meta.last_page <= 1 && meta.current_page <= 1) return '';
  const link = (to: number, label: string, rel: string) => `<a class="button-link secondary" rel="${rel}" href="${escapeHtml(hrefWith(locale, path, { ...params, page: to }))}">${escapeHtml(label)}</a>`;
  const previous = meta.current_page > 1 ? link(Math.min(meta.current_page - 1, meta.last_page), locale.t('console.list.previous'), 'prev') : '';
  const next = meta.current_page < meta.last_page ? link(meta.current_page + 1, locale.t('console.list.next'), 'next') : '';
  return `<nav class="pager" aria-label="${escapeHtml(locale.t('console.list.pages'))}">
  ${previous}
  <p class="hint" data-field="page">${locale.html('console.list.page_of', { page: meta.current_page, pages: meta.last_page, total: meta.total })}</p>
  ${next}
</nav>`;
}

/** A record's facts as label and value pairs (a payment, a transfer); a value is escaped text unless given as `{ html }`. */
export function facts(rows: ReadonlyArray<readonly [label: string, value: string | { html: string } | null]>, id?: string): string {
  const shown = rows.filter((row): row is readonly [string, string | { html: string }] => row[1] !== null);
  return `<dl class="facts"${id ? ` id="${escapeHtml(id)}"` : ''}>
  ${shown.map(([label, value]) => `<div><dt>${escapeHtml(label)}</dt><dd>${typeof value === 'string' ? escapeHtml(value) : value.html}</dd></div>`).join('\n  ')}
</dl>`;
}

export interface SelectField {
  name: string;
  label: string;
  options: ReadonlyArray<{ value: string; label: string }>;
  value: string;
}

/** A labelled select (a list's filter); the option of `value` is chosen. */
export function selectField({ name, label, options, value }: SelectField): string {
  const id = `f-${name}`;
  return `<div class="field"><label for="${id}">${escapeHtml(label)}</label>
  <select id="${id}" name="${escapeHtml(name)}">
  ${options.map((option) => `<option value="${escapeHtml(option.value)}"${option.value === value ? ' selected' : ''}>${escapeHtml(option.label)}</option>`).join('\n  ')}
  </select></div>`;
}

/** A labelled text box of a list's filter (an exact reference to look for); empty means "any". */
export interface TextFilterField {
  name: string;
  label: string;
  value: string;
  maxLength: number;
  hint?: string;
}

function textFilterField({ name, label, value, maxLength, hint }: TextFilterField): string {
  const id = `f-${name}`;
  return `<div class="field"><label for="${id}">${escapeHtml(label)}</label>
  <input id="${id}" name="${escapeHtml(name)}" type="text" value="${escapeHtml(value)}" maxlength="${maxLength}" autocomplete="off"${hint ? ` aria-describedby="${id}-hint"` : ''}>
  ${hint ? `<p class="hint" id="${id}-hint">${escapeHtml(hint)}</p>` : ''}</div>`;
}

/** A list's filter: a GET form of selects (and text boxes), with its button; the page number starts again at 1. */
export function filterForm(locale: Locale, path: string, fields: readonly (SelectField | TextFilterField)[], id = 'filter-form'): string {
  return `<form method="get" action="${escapeHtml(locale.pathOf(path))}" class="filters" id="${escapeHtml(id)}">
  ${locale.lang === 'en' ? '<input type="hidden" name="lang" value="en">' : ''}
  ${fields.map((field) => 'options' in field ? selectField(field) : textFilterField(field)).join('\n  ')}
  <button type="submit" class="secondary">${locale.html('console.list.filter')}</button>
</form>`;
}

/** An amount of money (`Bs 12,50`) for a page; a negative one keeps its sign. */
export function moneyText(locale: Locale, centavos: number): string {
  return locale.money(centavos);
}

/**
 * The card of a secret shown this once (a new key, a webhook endpoint's signing secret): the value to copy, what
 * it is, and that it cannot be shown again — it is never stored in clear. The page that shows it has no
 * language switch (reading it again would need the secret again).
 */
export function shownOnce(locale: Locale, { heading, text, value, id }: { heading: string; text: string; value: string; id: string }): string {
  return `<section class="card" aria-labelledby="${escapeHtml(id)}-heading">
  <h1 id="${escapeHtml(id)}-heading">${escapeHtml(heading)}</h1>
  <p>${escapeHtml(text)}</p>
  <p class="link" id="${escapeHtml(id)}" data-field="${escapeHtml(id)}">${escapeHtml(value)}</p>
  <p class="hint">${locale.html('console.shown_once')}</p>
</section>`;
}

export interface ChoiceField {
  name: string;
  legend: string;
  type: 'radio' | 'checkbox';
  /** `name`: an option's own field (checkboxes: a form post keeps one value per name). */
  options: ReadonlyArray<{ value: string; label: string; hint?: string; name?: string }>;
  /** The options chosen. */
  chosen: readonly string[];
  error?: string;
}

/** A fieldset of radios or checkboxes (a key's kind, an endpoint's events), with its legend and error; `name` ids it (and names the radios). */
export function choiceField({ name, legend, type, options, chosen, error }: ChoiceField): string {
  const id = `f-${name}`;
  return `<fieldset class="choices" id="${escapeHtml(id)}"${error ? ` aria-describedby="${escapeHtml(id)}-error"` : ''}>
  <legend>${escapeHtml(legend)}</legend>
  ${options.map((option, index) => `<div class="choice"><input type="${type}" id="${escapeHtml(`${id}-${index}`)}" name="${escapeHtml(option.name ?? name)}" value="${escapeHtml(option.value)}"${chosen.includes(option.value) ? ' checked' : ''}${option.hint ? ` aria-describedby="${escapeHtml(`${id}-${index}-hint`)}"` : ''}>
  <label for="${escapeHtml(`${id}-${index}`)}">${escapeHtml(option.label)}</label>${option.hint ? `<p class="hint" id="${escapeHtml(`${id}-${index}-hint`)}">${escapeHtml(option.hint)}</p>` : ''}</div>`).join('\n  ')}
  ${error ? `<p class="error" id="${escapeHtml(id)}-error">${escapeHtml(error)}</p>` : ''}
</fieldset>`;
}

/** A short notice above a page's content (what a post/redirect/get just did), read out by screen readers. */
export function doneNotice(text: string | null): string {
  return text ? `<p class="done" role="status" id="done-notice">${escapeHtml(text)}</p>` : '';
}

/** The console's styles for the pieces above (added to every console page by layout.ts). */
export const LIST_STYLES = `
.pager { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; justify-content: space-between; margin-top: 1rem; }
.pager .button-link { width: auto; margin-top: 0; padding: .5rem .9rem; }
.facts { margin: 0; }
.facts div { display: flex; flex-wrap: wrap; gap: 0 1rem; border-top: 1px solid var(--line); padding: .5rem 0; }
.facts div:first-child { border-top: 0; }
.facts dt { color: var(--muted); flex: 0 0 11rem; }
.facts dd { margin: 0; flex: 1 1 10rem; min-width: 0; overflow-wrap: anywhere; }
.filters { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: end; margin-bottom: 1rem; }
.filters .field { flex: 1 1 12rem; min-width: 0; }
.filters select, .filters input { width: 100%; }
.filters button { width: auto; margin-top: 0; }
.figures { margin-top: .5rem; display: grid; grid-template-columns: repeat(auto-fit, minmax(8rem, 1fr)); gap: .75rem; }
.figures div { border: 1px solid var(--line); border-radius: 8px; padding: .6rem .75rem; }
.figures dt { color: var(--muted); font-size: .9rem; }
.figures dd { margin: 0; font-size: 1.25rem; font-weight: 700; overflow-wrap: anywhere; }
.figures dd .hint { display: block; font-weight: 400; }
.amount-in { color: var(--ok); }
.amount-out { color: var(--ink); }
.choices { border: 0; padding: 0; margin: .75rem 0 0; min-width: 0; }
.choices legend { font-weight: 600; padding: 0; }
.choice { display: grid; grid-template-columns: auto 1fr; column-gap: .5rem; align-items: start; margin: .4rem 0; }
.choice input { width: 1.25rem; height: 1.25rem; margin: .2rem 0 0; }
.choice label { margin: 0; font-weight: 400; overflow-wrap: anywhere; }
.choice .hint { grid-column: 2; }
.done { border-left: 4px solid var(--ok); background: #e6f4ea; padding: .6rem .75rem; border-radius: 4px; margin: 0 0 1rem; }
.code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; overflow-wrap: anywhere; }
pre.data { white-space: pre-wrap; overflow-wrap: anywhere; background: #f6f8fa; border: 1px solid var(--line); border-radius: 8px; padding: .75rem; margin: .5rem 0 0; font-size: .85rem; }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; }
.actions form { margin: 0; }
.actions .button-link, .actions button { width: auto; margin-top: 0; padding: .5rem .9rem; }
`;
