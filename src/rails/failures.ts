// The one list of reasons a rail gives for money it could not deliver — a transfer rejected or returned,
// a refund the payer's bank refused. Transfers and refunds show them as `failure_code`; each rail maps its
// own wire codes onto these, with a closed table.
export const RAIL_FAILURE_CODES = ['ACCOUNT_CLOSED', 'INVALID_ACCOUNT', 'REJECTED_BY_BANK'] as const;
export type RailFailureCode = (typeof RAIL_FAILURE_CODES)[number];
