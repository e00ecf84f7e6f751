// Helpers of the onboarding tests: intents through the partner API, and the hosted flow driven over HTTP
// like a browser (a one-cookie jar, CSRF field read from the page, redirects seen rather than followed).
import { randomUUID } from 'node:crypto';
import type { TestApp, TestResponse } from '../helpers/app.ts';

export interface Partner {
  partnerId: number;
  masterKey: string;
}

export async function createIntent(t: TestApp, partner: Partner, body: Record<string, unknown> = {}, key: string = randomUUID()): Promise<TestResponse> {
  return t.request('POST', '/api/v2/onboarding/intent', { apiKey: partner.masterKey, body, headers: { 'idempotency-key': key } });
}

export async function newIntent(t: TestApp, partner: Partner, body: Record<string, unknown> = {}) {
  const response = await createIntent(t, partner, body);
  if (response.status !== 201) throw new Error(`creating an intent answered ${response.status}: ${response.text}`);
  return response.body as { code: string; url: string; expires_at: string };
}

export const tokenOf = (intent: { url: string }) => intent.url.split('/onboarding/')[1]!;

export const VALID_FORM: Record<string, string> = {
  legal_name: 'Empanadas Pérez S.R.L.',
  trade_name: 'Café Pérez',
  tax_id: '1020304050',
  email: 'ana@perez.example',
  phone: '+591 71234567',
  city: 'Cochabamba',
  mcc: '5812',
  bank_code: '1001',
  account_number: '1000-2000-3456',
  account_holder: 'Ana Pérez',
};

export interface PageResponse {
  status: number;
  headers: Headers;
  text: string;
  location: string | null;
}

/** A browser of the hosted flow: keeps the flow cookie and reads the CSRF field from the last page. */
export class FlowBrowser {
  cookie: string | null = null;
  csrf: string | null = null;
  constructor(private readonly t: TestApp, readonly token: string) {}

  private async send(method: string, path: string, form?: Record<string, string>): Promise<PageResponse> {
    const headers: Record<string, string> = { accept: 'text/html' };
    if (this.cookie) headers.cookie = this.cookie;
    if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
    const response = await fetch(this.t.baseUrl + path, { method, headers, redirect: 'manual', body: form ? new URLSearchParams(form).toString() : undefined });
    const setCookie = response.headers.get('set-cookie');
    if (setCookie) this.cookie = setCookie.split(';')[0]!;
    const text = await response.text();
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(text);
    if (csrf) this.csrf = csrf[1]!;
    return { status: response.status, headers: response.headers, text, location: response.headers.get('location') };
  }

  get(suffix = '') {
    return this.send('GET', `/onboarding/${this.token}${suffix}`);
  }

  post(suffix: string, form: Record<string, string> = {}) {
    return this.send('POST', `/onboarding/${this.token}${suffix}`, { csrf_token: this.csrf ?? '', ...form });
  }

  /**
   * Opens the form and submits it. Like a browser, follows the redirect to the payment step, whose forms
   * carry the field of the cookie the post set (the post binds the browser with a new one); never the
   * redirect to the done page, which shows the key once and which a test reads itself.
   */
  async register(form: Record<string, string> = VALID_FORM): Promise<PageResponse> {
    await this.get();
    const posted = await this.post('', form);
    if (posted.status === 303 && posted.location === `/onboarding/${this.token}`) await this.get();
    return posted;
  }
}
