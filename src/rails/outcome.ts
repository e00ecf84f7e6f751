// What a call to a bank came to, whichever bank and whichever call: the one three-way outcome of the rails
// layer (contract §14.2). `unknown` means the bank may have acted — a QR may exist, a batch may be held — and
// is never read as a refusal wherever money may have moved.
export type RailOutcome<T> =
  | { outcome: 'ok'; value: T }
  /** The bank turned the call away and did nothing; its message, cleaned (no secret, no full account). */
  | { outcome: 'refused'; message: string }
  /** No answer, or one we cannot read: the bank may have acted. */
  | { outcome: 'unknown'; problem: string };
