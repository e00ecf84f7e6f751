// The countdown of a hosted page whose QR expires (the pay page, the onboarding activation payment):
// its markup and the script that keeps it.
//
// The countdown trusts the server's clock, not the device's: the page carries the server's time when it
// rendered, and the script measures the device clock's offset from it at the moment the request left
// (so network delay shows the payer a little less time, never more). A phone whose clock is minutes or
// days off still shows the right time left. It counts on the device's wall clock plus that offset, not
// on performance.now(), because the monotonic clock stops while a phone sleeps: a payer who locks the
// phone and comes back must see the time that is really left, and the page re-reads it the moment it is
// visible again (browsers slow timers down in hidden tabs). Screen readers hear milestones only (10, 5,
// 2 and 1 minutes, 30 and 10 seconds left) through a polite live region; the timer itself
// (role="timer") is not announced on every tick.
import { escapeHtml, jsonForScript } from './html.ts';
import type { Locale } from './i18n/locale.ts';

const COUNTDOWN_KEYS = [
  'countdown.minutes.one', 'countdown.minutes.other', 'countdown.seconds.one', 'countdown.seconds.other',
] as const;

/** The timer (filled in by the script) and its screen-reader announcements. */
export function countdownMarkup(locale: Locale): string {
  return `<p class="countdown" id="countdown" role="timer" aria-label="${escapeHtml(locale.t('countdown.label'))}" hidden></p>
  <p class="visually-hidden" id="countdown-announce" aria-live="polite"></p>`;
}

/**
 * Script source defining `countdown`: `countdown.remaining()` (milliseconds left by the server's clock)
 * and `countdown.start(onZero, isLive)`, which ticks the timer while `isLive()` holds (the page may stop
 * needing it: paid, canceled) and at zero calls `onZero` once.
 */
export function countdownScript(locale: Locale, expiresAt: Date | null, renderedAt: Date): string {
  return `var countdown = (function () {
  var texts = ${jsonForScript(locale.pick(COUNTDOWN_KEYS))};
  var tag = ${jsonForScript(locale.tag)};
  var expiresAt = ${expiresAt === null ? 'null' : expiresAt.getTime()};
  var serverNow = ${renderedAt.getTime()};
  var MILESTONES = [600, 300, 120, 60, 30, 10];
  var twoDigits = new Intl.NumberFormat(tag, { minimumIntegerDigits: 2, useGrouping: false });
  var plurals = new Intl.PluralRules(tag);
  var navigation = performance.getEntriesByType ? performance.getEntriesByType('navigation')[0] : null;
  var sentAt = navigation && navigation.requestStart > 0 ? navigation.requestStart : performance.now();
  // The server's clock minus the device's, as of the moment the request left.
  var offset = serverNow - (Date.now() - (performance.now() - sentAt));
  function remaining() { return expiresAt === null ? Infinity : expiresAt - (Date.now() + offset); }
  function say(base, count) {
    var text = texts[base + '.' + plurals.select(count)] || texts[base + '.other'];
    document.getElementById('countdown-announce').textContent = text.replace('{count}', String(count));
  }
  function start(onZero, isLive) {
    var timer = document.getElementById('countdown');
    if (expiresAt === null || !timer) return;
    var announced = null;
    var pending = null;
    var done = false;
    function tick() {
      clearTimeout(pending);
      if (done || !isLive()) return;
      var left = remaining();
      if (left <= 0) { done = true; onZero(); return; }
      var seconds = Math.ceil(left / 1000);
      var h = Math.floor(seconds / 3600), m = Math.floor(seconds % 3600 / 60), s = seconds % 60;
      timer.textContent = (h > 0 ? h + ':' + twoDigits.format(m) : String(m)) + ':' + twoDigits.format(s);
      // More than a day ahead, the deadline in words says it better than a clock of 71 hours.
      timer.hidden = seconds > 86400;
      // Milestones already behind at load are not announced: the page itself is being read then.
      var first = announced === null;
      if (first) announced = {};
      for (var i = 0; i < MILESTONES.length; i++) {
        var milestone = MILESTONES[i];
        if (seconds > milestone || announced[milestone]) continue;
        announced[milestone] = true;
        if (!first) milestone >= 60 ? say('countdown.minutes', milestone / 60) : say('countdown.seconds', milestone);
      }
      pending = setTimeout(tick, (left % 1000) || 1000);
    }
    document.addEventListener('visibilitychange', function () { if (!document.hidden) tick(); });
    window.addEventListener('pageshow', tick);
    tick();
  }
  return { remaining: remaining, start: start };
})();`;
}
