// The terminal's two scripts (docs/console.md#pos-terminal), each run under the page's CSP nonce; no inline handler.
//
//  - The keypad's: shows the big keys, which fill the form's number field (digits enter centavos from the
//    right, as on a till), and the amount as money in the page's language. A page brought back from the
//    back/forward cache is loaded again, so its form never reuses the idempotency key of a sale already made.
//  - The QR screen's: long-polls the session's status endpoint (`?wait=25`, ETag) and turns the screen to
//    "Pagado" or "expired/cancelled" in place; keeps the countdown (kernel/countdown.ts); keeps the screen
//    awake while the QR is shown (Screen Wake Lock, where the browser has it). A failed poll — the tablet's
//    Wi-Fi dropping — is retried with a growing pause (1, 2, 4, 8, at most 10 s) and at once when the
//    browser is back online: the sale is not lost, the payment shows when the connection returns. A poll
//    is abandoned when the browser goes offline or 10 s past its wait, so a dead socket cannot hold it.
//    "Guardar QR" opens the share sheet where the browser can share files: the pay page's script (qr/pages/save-qr.ts).
import { countdownScript } from '../../kernel/countdown.ts';
import { jsonForScript } from '../../kernel/html.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import type { TerminalStatus } from '../terminal.ts';
import { saveQrScript } from '../../qr/pages/save-qr.ts';

export function keypadScript(locale: Locale): string {
  return `(function () {
  var formats = ${jsonForScript(locale.clientFormats())};
  var money = new Intl.NumberFormat(formats.tag, formats.money);
  var input = document.getElementById('f-amount');
  var display = document.getElementById('amount-display');
  var form = document.getElementById('charge-form');
  var button = document.getElementById('charge-button');
  var digits = '';
  var start = Number(input.value);
  if (input.value !== '' && isFinite(start) && start > 0 && start <= 100000) digits = String(Math.round(start * 100));
  function show() {
    var value = digits === '' ? 0 : Number(digits) / 100;
    display.textContent = money.format(value);
    input.value = digits === '' ? '' : value.toFixed(2);
  }
  document.getElementById('amount-field').hidden = true;
  document.getElementById('amount-display-block').hidden = false;
  document.querySelectorAll('[data-key]').forEach(function (key) {
    key.addEventListener('click', function () {
      var pressed = key.getAttribute('data-key');
      if (pressed === 'back') digits = digits.slice(0, -1);
      else {
        var next = (digits + pressed).replace(/^0+/, '');
        if (next.length <= 8) digits = next; // 999999.99 at most: the server says the real bound
      }
      show();
    });
  });
  form.addEventListener('submit', function () {
    // The second tap of an impatient finger: the idempotency key makes it harmless, this makes it rare.
    setTimeout(function () { button.disabled = true; }, 0);
  });
  window.addEventListener('pageshow', function (event) { if (event.persisted) location.reload(); });
  show();
})();`;
}

const CLOSED_KEYS = ['console.terminal.closed.expired', 'console.terminal.closed.merchant'] as const;

export function qrScreenScript(locale: Locale, initial: TerminalStatus, renderedAt: Date, titles: { active: string; paid: string; closed: string }): string {
  return `(function () {
  var state = ${jsonForScript(initial)};
  var texts = ${jsonForScript(locale.pick(CLOSED_KEYS))};
  var titles = ${jsonForScript(titles)};
  var formats = ${jsonForScript(locale.clientFormats())};
  var langSuffix = ${jsonForScript(locale.href(''))};
  ${countdownScript(locale, initial.expires_at === null ? null : new Date(initial.expires_at), renderedAt)}
  var statusUrl = location.pathname.replace(/\\/$/, '') + '/status';
  var etag = null;
  var money = new Intl.NumberFormat(formats.tag, formats.money);
  function $(id) { return document.getElementById(id); }
  function shown(s) {
    // Past the deadline the QR takes no payment: show it expired before the server says so.
    if (s.status === 'ACTIVE' && countdown.remaining() <= 0) return { status: 'CANCELED', cancel_reason: 'expired', amount: s.amount, paid_at: null, receipt_path: null };
    return s;
  }

  var lock = null;
  function keepAwake() {
    if (!('wakeLock' in navigator) || lock !== null || state.status !== 'ACTIVE' || document.hidden) return;
    navigator.wakeLock.request('screen').then(function (held) {
      lock = held;
      held.addEventListener('release', function () { lock = null; });
      if (state.status !== 'ACTIVE') letSleep();
    }).catch(function () { /* refused (battery saver, no permission): the QR still works */ });
  }
  function letSleep() { if (lock) { lock.release(); lock = null; } }
  // The browser drops the lock when the page is hidden; it is asked again when the page is seen again.
  document.addEventListener('visibilitychange', keepAwake);

  var rendered = null;
  function render(s) {
    var key = s.status === 'CANCELED' ? s.status + s.cancel_reason : s.status;
    if (key === rendered) return;
    rendered = key;
    $('waiting').hidden = s.status !== 'ACTIVE';
    $('paid').hidden = s.status !== 'PAID';
    $('closed').hidden = s.status !== 'CANCELED';
    if (s.status === 'PAID') {
      $('paid-amount').textContent = money.format(Number(s.amount));
      if (s.receipt_path) $('receipt-link').href = s.receipt_path + langSuffix;
      $('paid-heading').focus();
      document.title = titles.paid;
    } else if (s.status === 'CANCELED') {
      $('closed-text').textContent = texts['console.terminal.closed.' + (s.cancel_reason === 'expired' ? 'expired' : 'merchant')];
      $('closed-heading').focus();
      document.title = titles.closed;
    }
    if (s.status !== 'ACTIVE') { letSleep(); $('offline').hidden = true; }
  }

  var wakeUp = null;
  var inFlight = null;
  window.addEventListener('online', function () { if (wakeUp) wakeUp(); });
  // A dropped network can leave a long poll hanging for minutes (nothing closes the socket): when the
  // browser knows it is offline the poll is dropped at once, and any poll is dropped past its wait + 10 s.
  window.addEventListener('offline', function () { if (inFlight) inFlight.abort(); });
  function pause(ms) {
    return new Promise(function (resolve) {
      var timer = setTimeout(done, ms);
      function done() { clearTimeout(timer); wakeUp = null; resolve(); }
      wakeUp = done;
    });
  }
  async function poll() {
    var failures = 0;
    while (state.status === 'ACTIVE') {
      var controller = new AbortController();
      var overdue = setTimeout(function () { controller.abort(); }, 35000);
      inFlight = controller;
      try {
        var headers = etag ? { 'If-None-Match': etag } : {};
        var response = await fetch(statusUrl + '?wait=25', { headers: headers, cache: 'no-store', credentials: 'same-origin', signal: controller.signal });
        var json = (response.headers.get('content-type') || '').indexOf('application/json') === 0;
        if (response.status === 200 && json) {
          etag = response.headers.get('ETag');
          state = await response.json();
          render(shown(state));
        } else if (response.status !== 304) {
          // Signed out meanwhile (the answer is the sign-in page) or the QR is gone: the page itself says what to do.
          if (response.redirected || response.status === 404 || !json) { location.reload(); return; }
          throw new Error('status ' + response.status);
        }
        failures = 0;
        $('offline').hidden = true;
      } catch (e) {
        failures += 1;
        $('offline').hidden = false;
        await pause(Math.min(10000, 1000 * Math.pow(2, failures - 1)));
      } finally {
        clearTimeout(overdue);
        inFlight = null;
      }
    }
  }
  ${saveQrScript('#qr-image')}
  countdown.start(function () { render(shown(state)); }, function () { return state.status === 'ACTIVE'; });
  render(shown(state));
  keepAwake();
  poll();
})();`;
}
