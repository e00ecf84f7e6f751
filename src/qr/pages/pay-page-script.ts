// The pay page's script: long-polls the public status and updates the page in place, and keeps the
// countdown to the QR's expiry.
//
// The countdown trusts the server's clock, not the device's: the page carries the server's time when it
// rendered, and the script counts down on the browser's monotonic clock (performance.now) from the
// moment the response arrived, so a phone whose clock is minutes off still shows the right time left,
// and changing the clock meanwhile changes nothing. Screen readers hear milestones only (10, 5, 2 and
// 1 minutes, 30 and 10 seconds left) through a polite live region; the timer itself is not announced.
// At zero the page turns to the expired state without a reload; the server's own answer (PAID in the
// last instant, say) still wins when it comes.
import { jsonForScript } from '../../kernel/html.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import { STATUS_KEYS, type PublicStatus } from './public-status.ts';

const COUNTDOWN_KEYS = [
  'pay.countdown.minutes.one', 'pay.countdown.minutes.other', 'pay.countdown.seconds.one', 'pay.countdown.seconds.other',
] as const;

export function payPageScript(locale: Locale, initial: PublicStatus, renderedAt: Date, titles: { payTitle: string; merchantName: string }): string {
  return `(function () {
  var state = ${jsonForScript(initial)};
  var titles = ${jsonForScript(titles)};
  var serverNow = ${renderedAt.getTime()};
  var texts = ${jsonForScript(locale.pick([...STATUS_KEYS, ...COUNTDOWN_KEYS]))};
  var formats = ${jsonForScript(locale.clientFormats())};
  var MILESTONES = [600, 300, 120, 60, 30, 10];
  var statusUrl = location.pathname.replace(/\\/$/, '') + '/status';
  var etag = null;
  var money = new Intl.NumberFormat(formats.tag, formats.money);
  var when = new Intl.DateTimeFormat(formats.tag, formats.dateTime);
  var twoDigits = new Intl.NumberFormat(formats.tag, { minimumIntegerDigits: 2, useGrouping: false });
  var plurals = new Intl.PluralRules(formats.tag);
  function $(id) { return document.getElementById(id); }
  function field(name) { return document.querySelector('[data-field="' + name + '"]'); }
  function plural(base, count) {
    var text = texts[base + '.' + plurals.select(count)] || texts[base + '.other'];
    return text.replace('{count}', String(count));
  }

  // Milliseconds left until expires_at by the server's clock, measured on the monotonic clock.
  var navigation = performance.getEntriesByType ? performance.getEntriesByType('navigation')[0] : null;
  var receivedAt = navigation && navigation.responseStart > 0 ? navigation.responseStart : performance.now();
  var deadline = state.expires_at ? receivedAt + (Date.parse(state.expires_at) - serverNow) : null;
  function remaining() { return deadline === null ? Infinity : deadline - performance.now(); }

  function shown(s) {
    // Past the deadline the QR takes no payment: show it expired even before the server says so.
    if (s.status === 'ACTIVE' && remaining() <= 0) return { status: 'CANCELED', cancel_reason: 'expired', amount: s.amount, paid_at: null };
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
    if ($('simulate')) $('simulate').hidden = !payable;
    document.title = payable ? titles.payTitle : titles.merchantName + ' — ' + texts[key];
  }

  var announced = null;
  function tick() {
    var left = remaining();
    if (left <= 0) {
      render(shown(state));
      return;
    }
    var seconds = Math.ceil(left / 1000);
    var countdown = $('countdown');
    var h = Math.floor(seconds / 3600), m = Math.floor(seconds % 3600 / 60), s = seconds % 60;
    countdown.textContent = (h > 0 ? h + ':' + twoDigits.format(m) : String(m)) + ':' + twoDigits.format(s);
    countdown.hidden = false;
    // Milestones already behind at load are not announced: the page itself is being read then.
    var first = announced === null;
    if (first) announced = {};
    for (var i = 0; i < MILESTONES.length; i++) {
      var milestone = MILESTONES[i];
      if (seconds > milestone || announced[milestone]) continue;
      announced[milestone] = true;
      if (!first) $('countdown-announce').textContent = milestone >= 60 ? plural('pay.countdown.minutes', milestone / 60) : plural('pay.countdown.seconds', milestone);
    }
    setTimeout(function () { if (state.status === 'ACTIVE') tick(); }, (left % 1000) || 1000);
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
  if (state.status === 'ACTIVE' && $('countdown')) tick();
  poll();
})();`;
}
