// Where the browser tests find Chromium: Debian's package (`apt-get install -y chromium`), never a download.
// Free of vitest, so global-setup can ask too.
import { existsSync } from 'node:fs';

export const CHROMIUM = '/usr/bin/chromium';

export function hasChromium(): boolean {
  return existsSync(CHROMIUM);
}
