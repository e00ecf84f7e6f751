// The pay page's script: long-polls the public status and updates the page in place, and keeps the
// countdown to the QR's expiry (kernel/countdown.ts). At zero the page turns to the expired state
// without a reload; the server's own answer (PAID in the last instant, say) still wins when it comes.
// Where the browser can share files (a phone), "Guardar QR" opens the share sheet with the QR image —
// "save image", or the bank's app itself — instead of the link's download (save-qr.ts).
import { countdownScript } from '../../kernel/countdown.ts';
import { jsonForScript } from '../../kernel/html.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import { STATUS_KEYS, type PublicStatus } from './public-status.ts';
import { saveQrScript } from './save-qr.ts';

export function payPageScript(locale: Locale, initial: PublicStatus, renderedAt: Date, titles: { payTitle: string; merchantName: string }): string {
  return `(function () {
  var state = ${jsonForScript(initial)};
  var titles = ${jsonForScript(titles)};
  var texts = ${jsonForScript(locale.pick(STATUS_KEYS))};
  var formats = ${jsonForScript(locale.clientFormats())};
  ${countdownScript(locale, initial.expires_at === null ? null : new Date(initial.expires_at), renderedAt)}
  var statusUrl = location.pathname.replace(/\\/$/, '') + '/status';
  var etag = null;
  var money = new Intl.NumberFormat(formats.tag, formats.money);
  var when = new Intl.DateTimeFormat(formats.tag, formats.dateTime);
  function $(id) { return document.getElementById(id); }
  function field(name) { return document.querySelector('[data-field="' + name + '"]'); }
  function shown(s) {
    // Past the deadline the QR takes no payment: show it expired even before the server says so.
    if (s.status === 'ACTIVE' && countdown.remaining() <= 0) return { status: 'CANCELED', cancel_reason: 'expired', amount: s.amount, paid_at: null };
    return s;
  }

  function render(s) {
    var status = $('status');
    var key = s.status === 'CANCELED' ? 'pay.status.CANCELED_' + s.cancel_reason : 'pay.status.' + s.status;
    if (status.getAttribute('data-state') !== s.status || status.textContent !== texts[key]) {
      status.textContent = texts[key];
      status.setAttribute('data-state', s.status);
    }
    if (s.paid_at && s.amount) {
      field('paid-amount').textContent = money.format(Number(s.amount));
      field('paid-date').textContent = when.format(new Date(s.paid_at));
      $('paid').hidden = false;
    }
    var payable = s.status === 'ACTIVE';
    $('pay-section').hidden = !payable;
    if ($('expiry')) $('expiry').hidden = !payable;
    if ($('expired-at')) $('expired-at').hidden = s.cancel_reason !== 'expired';
    if ($('simulate')) $('simulate').hidden = !payable;
    document.title = payable ? titles.payTitle : titles.merchantName + ' — ' + texts[key];
  }

  function later(ms) { return new Promise(function (resolve) { setTimeout(resolve, ms); }); }
  async function poll() {
    while (state.status === 'ACTIVE') {
      try {
        var headers = etag ? { 'If-None-Match': etag } : {};
        var response = await fetch(statusUrl + '?wait=25', { headers: headers, cache: 'no-store' });
        if (response.status === 200) {
          etag = response.headers.get('ETag');
          state = await response.json();
          render(shown(state));
        } else if (response.status !== 304) {
          await later(3000);
        }
      } catch (e) {
        await later(3000);
      }
    }
  }
  ${saveQrScript('img.qr')}

  countdown.start(function () { render(shown(state)); }, function () { return state.status === 'ACTIVE'; });
  poll();
})();`;
}
