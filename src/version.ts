// The service's version: package.json's, read once when the process loads this module (src/ under tsx and
// dist/ after the build are both one level below it). /healthz and the start banner show it; a release is
// cut with `npm version` (docs/releasing.md).
import { readFileSync } from 'node:fs';

export const SERVICE_VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
