// A browser for the console's HTTP tests: a cookie jar over fetch that never follows redirects, and the
// CSRF field of the last page it read, sent with its forms as a browser would.
import type { TestApp } from '../helpers/app.ts';

export interface PageResponse {
  status: number;
  headers: Headers;
  text: string;
  location: string | null;
  /** The Set-Cookie lines of the answer, as sent. */
  setCookies: string[];
}

export class ConsoleBrowser {
  readonly cookies = new Map<string, string>();
  csrf: string | null = null;

  constructor(private readonly t: Pick<TestApp, 'baseUrl'>, private readonly userAgent = 'Mozilla/5.0 (test) ConsoleBrowser') {}

  async send(method: string, path: string, form?: Record<string, string>, headers: Record<string, string> = {}): Promise<PageResponse> {
    const sent: Record<string, string> = { accept: 'text/html', 'user-agent': this.userAgent, ...headers };
    if (this.cookies.size > 0) sent.cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    if (form) sent['content-type'] = 'application/x-www-form-urlencoded';
    const response = await fetch(this.t.baseUrl + path, { method, headers: sent, redirect: 'manual', body: form ? new URLSearchParams(form).toString() : undefined });
    const setCookies = response.headers.getSetCookie();
    for (const line of setCookies) {
      const [pair] = line.split(';');
      const index = pair!.indexOf('=');
      const name = pair!.slice(0, index);
      if (/Max-Age=0\b/.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, pair!.slice(index + 1));
    }
    const text = await response.text();
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(text);
    if (csrf) this.csrf = csrf[1]!;
    return { status: response.status, headers: response.headers, text, location: response.headers.get('location'), setCookies };
  }

  get(path: string) {
    return this.send('GET', path);
  }

  /** Posts a form with the CSRF field of the last page read (unless the form names its own). */
  post(path: string, form: Record<string, string> = {}) {
    return this.send('POST', path, { csrf_token: this.csrf ?? '', ...form });
  }

  /** Posts exactly `form`: no CSRF field added. */
  postRaw(path: string, form: Record<string, string>) {
    return this.send('POST', path, form);
  }

  /** Opens the sign-in page and signs in. */
  async signIn(email: string, password: string): Promise<PageResponse> {
    await this.get('/console/sign-in');
    return this.post('/console/sign-in', { email, password });
  }

  /** Opens an invitation and sets the password; reads the home page after, as a browser does. */
  async accept(token: string, password: string): Promise<PageResponse> {
    await this.get(`/console/invitations/${token}`);
    const posted = await this.post(`/console/invitations/${token}`, { password, password_confirmation: password });
    if (posted.status === 303) await this.get('/console');
    return posted;
  }
}

/** The token of an invitation link. */
export function tokenOf(invitationUrl: string): string {
  return invitationUrl.split('/console/invitations/')[1]!;
}

/** Invites `email` to the merchant's console through the operator API; the link's token. */
export async function inviteByOperator(t: TestApp, businessCode: number, email: string, role?: 'owner' | 'cashier'): Promise<string> {
  const response = await t.request('POST', `/admin/v1/merchants/${businessCode}/users`, { body: { email, ...(role ? { role } : {}) } });
  if (response.status !== 201) throw new Error(`inviting ${email} answered ${response.status}: ${response.text}`);
  return tokenOf(response.body.invitation_url);
}

/** A signed-in browser of a new owner of the merchant. */
export async function newOwner(t: TestApp, businessCode: number, email: string, password = 'correct horse battery'): Promise<ConsoleBrowser> {
  const browser = new ConsoleBrowser(t);
  const accepted = await browser.accept(await inviteByOperator(t, businessCode, email), password);
  if (accepted.status !== 303) throw new Error(`accepting the invitation of ${email} answered ${accepted.status}`);
  return browser;
}

/** A signed-in cashier, invited by `owner` from the users page. */
export async function newCashier(owner: ConsoleBrowser, t: TestApp, email: string, password = 'cashier password 1'): Promise<{ browser: ConsoleBrowser; token: string }> {
  await owner.get('/console/users');
  const invited = await owner.post('/console/users', { email });
  if (invited.status !== 201) throw new Error(`inviting the cashier ${email} answered ${invited.status}`);
  const link = /id="invitation-link"[^>]*>([^<]+)</.exec(invited.text)![1]!;
  const browser = new ConsoleBrowser(t, 'Mozilla/5.0 (cashier till)');
  const accepted = await browser.accept(tokenOf(link), password);
  if (accepted.status !== 303) throw new Error(`accepting the cashier invitation answered ${accepted.status}`);
  return { browser, token: tokenOf(link) };
}

/** The people of a tenancy test: business A's owner and cashier, business B's owner, signed in; their emails start with `prefix`. */
export async function ownersAndCashier(t: TestApp, prefix: string, a: { businessCode: number }, b: { businessCode: number }): Promise<{ ownerA: ConsoleBrowser; cashierA: ConsoleBrowser; ownerB: ConsoleBrowser }> {
  const ownerA = await newOwner(t, a.businessCode, `${prefix}.owner.a@example.com`);
  const cashierA = (await newCashier(ownerA, t, `${prefix}.cashier.a@example.com`)).browser;
  const ownerB = await newOwner(t, b.businessCode, `${prefix}.owner.b@example.com`);
  return { ownerA, cashierA, ownerB };
}
