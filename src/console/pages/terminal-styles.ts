// The terminal pages' styles (docs/console.md#pos-terminal), after the console's: keys of 64 px and more for a
// thumb, the QR as large as the screen allows, and the states of the QR screen.
export const TERMINAL_STYLES = `
main { max-width: 32rem; }
.display { display: block; font: 700 2.5rem/1.2 system-ui, sans-serif; font-variant-numeric: tabular-nums; text-align: right; margin: .25rem 0 .5rem;
  padding: .5rem .75rem; border: 1px solid var(--line); border-radius: 8px; background: #f6f8fa; overflow-wrap: anywhere; }
.keys { display: grid; grid-template-columns: repeat(3, 1fr); gap: .5rem; margin: .75rem 0; }
.keys button { margin: 0; min-height: 4rem; font-size: 1.6rem; background: #fff; color: var(--ink); border: 1px solid #8c959f; touch-action: manipulation; }
.keys button:active { background: #eef4fb; }
button.charge { min-height: 3.5rem; font-size: 1.3rem; touch-action: manipulation; }
.big-amount { font-size: 2.5rem; font-weight: 700; text-align: center; margin: .25rem 0; font-variant-numeric: tabular-nums; }
.terminal-qr { display: block; width: 100%; max-width: min(100%, 70vh); height: auto; margin: .5rem auto; image-rendering: pixelated; }
.centered { text-align: center; }
.countdown { text-align: center; }
.paid-mark { font-size: 3rem; font-weight: 800; color: var(--ok); text-align: center; margin: .5rem 0; }
.closed-mark { font-size: 1.6rem; font-weight: 800; color: var(--bad); text-align: center; margin: .5rem 0; }
/* The state headings take the focus when the screen changes (screen readers hear it); no ring on a heading nobody tabbed to. */
h2[tabindex="-1"]:focus { outline: none; }
.offline { background: #fff8c5; border: 1px solid #d4a72c; border-radius: 8px; padding: .5rem .75rem; margin: .5rem 0 0; }
.button-link.secondary { background: #fff; color: var(--accent); border: 1px solid var(--accent); }
form.cancel button { min-height: 3rem; }
`;
