// "Guardar QR" (docs/qr.md#save-the-qr), one control for every screen that shows a QR to pay: the hosted pay
// page (pay-page.ts) and the console terminal's QR screen (console/pages/terminal-qr-view.ts). Without a
// script it is a plain link to the image as a named attachment — `GET /pay/{token}/qr.png?download=1`, whose
// Content-Disposition says the same name as the link's `download` (qr-file-name.ts). Where the browser can
// share files (a phone), the script opens the share sheet with the same PNG instead — "save image", a chat,
// or the bank's app itself; anything but the user closing the sheet falls back to the link's download.
import { escapeHtml } from '../../kernel/html.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import type { MessageKey } from '../../kernel/i18n/messages-en.ts';

/** The hint over the button stands apart from what is above it. */
export const SAVE_QR_STYLES = `
#save-qr-help { margin-top: .75rem; }
`;

export interface SaveQrLink {
  payToken: string;
  /** The attachment's name (qrFileName). */
  fileName: string;
  /** The hint above the button, which the button is described by: who saves the QR, and what for. */
  helpKey: MessageKey;
  /** The link's classes (the page's button look); `button-link` unless told. */
  className?: string;
}

/** The hint and the link, `#save-qr-help` and `#save-qr`: one per page. */
export function saveQrLink(locale: Locale, { payToken, fileName, helpKey, className = 'button-link' }: SaveQrLink): string {
  return `<p class="muted" id="save-qr-help">${locale.html(helpKey)}</p>
  <a class="${escapeHtml(className)}" id="save-qr" href="${escapeHtml(locale.pathOf(`/pay/${payToken}/qr.png?download=1`))}" download="${escapeHtml(fileName)}" type="image/png" aria-describedby="save-qr-help">${locale.html('pay.save.button')}</a>`;
}

/**
 * The script part, for inside a page script's function: `#save-qr` shares the image `imageSelector` shows
 * (a PNG data URI: the same bytes as the download). The file is made in the click itself: a share must
 * start within the user's gesture (Safari refuses one that waited for the network).
 */
export function saveQrScript(imageSelector: string): string {
  return `(function () {
    var save = document.getElementById('save-qr');
    function qrFile() {
      var prefix = 'data:image/png;base64,';
      var image = document.querySelector(${JSON.stringify(imageSelector)});
      var src = (image && image.getAttribute('src')) || '';
      if (src.indexOf(prefix) !== 0) return null;
      var binary = atob(src.slice(prefix.length));
      var bytes = new Uint8Array(binary.length);
      for (var i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
      return new File([bytes], save.getAttribute('download'), { type: 'image/png' });
    }
    if (save && typeof navigator.canShare === 'function' && typeof navigator.share === 'function') {
      save.addEventListener('click', function (event) {
        var file = qrFile();
        if (!file || !navigator.canShare({ files: [file] })) return;
        event.preventDefault();
        navigator.share({ files: [file] }).catch(function (error) {
          if (!error || error.name !== 'AbortError') location.assign(save.href);
        });
      });
    }
  })();`;
}
