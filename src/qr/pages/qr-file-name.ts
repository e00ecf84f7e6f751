// The name of the QR image the pay page's "Guardar QR" saves (docs/qr.md#save-the-qr): the payer who pays
// from the phone's gallery finds it among other pictures by whom and how much — `QR-Tienda-Dona-Rosa-Bs-25.50.png`,
// or `QR-Tienda-Dona-Rosa.png` when the payer chooses the amount. Only ASCII letters, digits, dashes and
// one dot: the name goes into a `download` attribute, a Content-Disposition header and a phone's file
// system, so no spaces, path characters, quotes or line breaks whatever the merchant is called.
import { formatCentavos } from '../../money.ts';
import { toEmvText } from '../emv.ts';
import type { QrRow } from '../store.ts';

/** Enough of the merchant's name to recognise it; a file name far longer is cut by some phones' galleries. */
const MAX_MERCHANT_CHARS = 40;

export function qrFileName(merchantName: string, qr: Pick<QrRow, 'amount_centavos' | 'modify_amount'>): string {
  // The EMV transliteration (Doña → Dona, Pérez → Perez), then every run of anything else a single dash.
  const merchant = toEmvText(merchantName, Number.MAX_SAFE_INTEGER, '')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .slice(0, MAX_MERCHANT_CHARS)
    .replace(/^-+|-+$/g, '');
  const parts = ['QR'];
  if (merchant !== '') parts.push(merchant);
  // Only an amount the payer cannot change names the file: a suggested one may not be what is paid.
  if (qr.amount_centavos !== null && !qr.modify_amount) parts.push('Bs', formatCentavos(qr.amount_centavos));
  return `${parts.join('-')}.png`;
}
