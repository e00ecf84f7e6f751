// Masking of bank account numbers (docs/api-reference.md#account-number-masking), shared by transfers (destination) and QR payments (payer):
// the full number stays in the database only; responses, events and logs get this form.

/**
 * Keeps the end of the final hyphen-separated group — at most 4 characters, and never more than the
 * number's length minus 4 — and replaces every other character, hyphens included, with `*`, keeping the
 * length: `1234-5678-90` → `**********90`, `20150123456789` → `**********6789`, `1234` → `****`.
 */
export function maskAccountNumber(accountNumber: string): string {
  const finalGroup = accountNumber.slice(accountNumber.lastIndexOf('-') + 1);
  const visible = Math.max(0, Math.min(4, finalGroup.length, accountNumber.length - 4));
  return '*'.repeat(accountNumber.length - visible) + accountNumber.slice(accountNumber.length - visible);
}
