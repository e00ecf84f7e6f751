// What the operator API and the CLI show of a reconciliation: amounts in BOB, as every answer of the API.
import { centavosToAmount, type Centavos } from '../money.ts';
import type { Reconciliation } from './reconciliation.ts';
import type { ReconciliationResource } from './schemas.ts';

export function toReconciliationView(reconciliation: Reconciliation): ReconciliationResource {
  const amount = (value: Centavos | null) => (value === null ? null : centavosToAmount(value));
  return {
    date: reconciliation.day,
    rail: reconciliation.rail,
    status: reconciliation.status,
    payments: { ...reconciliation.payments },
    transfers: { ...reconciliation.transfers },
    breaks: reconciliation.breaks.map((entry) => ({ kind: entry.kind, reference: entry.reference, ours: amount(entry.oursCentavos), bank: amount(entry.bankCentavos) })),
  };
}
