// The one way a rail names our records to a bank: derived from our ids, so a retried submission carries
// the same key forever, whatever process or retry sends it, and the bank (or our reconciliation) can match
// it back. Banco Económico's batch items carry a transfer's as `batchDetailId`, a batch's as `batchId`.
const PREFIXES = { transfer: 'mps-transfer-', refund: 'mps-refund-', batch: 'mps-b-' } as const;
export type RailKeyKind = keyof typeof PREFIXES;

/** `mps-transfer-42`, `mps-refund-rf_…`, `mps-b-3`. */
export function railKey(kind: RailKeyKind, id: number | string): string {
  return `${PREFIXES[kind]}${id}`;
}

/** The id a rail key names (`mps-transfer-42` → `42`), or null when it is not a key of that kind. */
export function idOfRailKey(kind: RailKeyKind, key: string): string | null {
  return key.startsWith(PREFIXES[kind]) ? key.slice(PREFIXES[kind].length) : null;
}
