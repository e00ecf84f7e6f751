// The simulator's knobs: how the bank behaves where the specification leaves it open, and the faults a
// test can ask for. Changed at run time through `POST /_control/knobs` (a partial update) or the
// `setKnobs` function of a started simulator; `POST /_control/reset` restores these defaults.

/** The bank calls a test can disturb, named after the last segment of their paths. */
export const OPERATIONS = ['authenticate', 'generateQR', 'cancelQR', 'statusQR', 'paidQR', 'accountsHistory', 'batchUpload'] as const;
export type Operation = (typeof OPERATIONS)[number];

/**
 * - refuse: answer `responseCode` ≠ 0 with a message (nothing done);
 * - http500: answer HTTP 500;
 * - stall: never answer (the connection stays open until the client gives up);
 * - close: close the connection without an answer;
 * - malformed: HTTP 200 with a body that is not JSON.
 * With `processed` the bank does the work first (the QR exists, the batch is taken, callbacks follow) and
 * only the answer is lost or broken — the case where a client cannot know whether money moved.
 */
export const FAULT_KINDS = ['refuse', 'http500', 'stall', 'close', 'malformed'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface Fault {
  kind: FaultKind;
  /** How many of the next calls it hits; 'always' until cleared. */
  times: number | 'always';
  processed: boolean;
  /** For 'refuse': the refusal's responseCode and message. */
  code: number;
  message: string;
}

export interface CallbackKnobs {
  /** The next N callbacks are not sent at all (recorded as dropped). */
  dropNext: number;
  /** Send every callback twice. */
  duplicate: boolean;
  /** Wait this long before sending each callback. */
  delayMs: number;
  /** Hold callbacks for `outOfOrderWindowMs` and send what gathered in reverse order. */
  outOfOrder: boolean;
  outOfOrderWindowMs: number;
  /** The next N batch-item callbacks are followed, `contradictAfterMs` later, by one with the other status. */
  contradictNext: number;
  contradictAfterMs: number;
  /** Attempts after the first when a callback gets no answer, a connection error or a 5xx. */
  retries: number;
  /** Back-off before retry k (1-based): retryBaseMs × 2^(k−1). */
  retryBaseMs: number;
  /** How long to wait for the merchant's answer. */
  timeoutMs: number;
}

export interface Knobs {
  /** Lifetime of a token from authenticate (the specification gives none). */
  tokenLifetimeMs: number;
  /** How statusQR spells its status key: the field table says statusQRCode, the example statusQrCode. */
  statusKey: 'statusQRCode' | 'statusQrCode';
  /** HTTP status of a refusal (responseCode ≠ 0); the specification does not say, 200 by default. */
  refusalHttpStatus: number;
  /** 'auto': items are decided `batchDecisionDelayMs` after upload; 'hold': a person decides (page or control API). */
  batchDecision: 'auto' | 'hold';
  batchDecisionDelayMs: number;
  /** What an upload with a batchId already seen gets (the real bank's behaviour is unknown). */
  duplicateBatchId: 'refuse' | 'accept';
  callbacks: CallbackKnobs;
  faults: Partial<Record<Operation, Fault>>;
  /** Answer this many ms late (after doing the work), per operation. */
  delays: Partial<Record<Operation, number>>;
}

export function defaultKnobs(): Knobs {
  return {
    tokenLifetimeMs: 60 * 60 * 1000,
    statusKey: 'statusQRCode',
    refusalHttpStatus: 200,
    batchDecision: 'auto',
    batchDecisionDelayMs: 2000,
    duplicateBatchId: 'refuse',
    callbacks: {
      dropNext: 0, duplicate: false, delayMs: 0, outOfOrder: false, outOfOrderWindowMs: 300,
      contradictNext: 0, contradictAfterMs: 500, retries: 3, retryBaseMs: 1000, timeoutMs: 5000,
    },
    faults: {},
    delays: {},
  };
}

type Problems = string[];

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function wholeNumber(value: unknown, name: string, problems: Problems, min = 0, max = 24 * 60 * 60 * 1000): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    problems.push(`${name} must be an integer from ${min} to ${max}`);
    return undefined;
  }
  return value;
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], name: string, problems: Problems): T | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    problems.push(`${name} must be one of ${allowed.join(', ')}`);
    return undefined;
  }
  return value as T;
}

function flag(value: unknown, name: string, problems: Problems): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') {
    problems.push(`${name} must be true or false`);
    return undefined;
  }
  return value;
}

function parseFault(value: unknown, name: string, problems: Problems): Fault | undefined {
  if (!isObject(value)) {
    problems.push(`${name} must be an object { kind, times?, processed?, code?, message? } or null`);
    return undefined;
  }
  const kind = oneOf(value.kind, FAULT_KINDS, `${name}.kind`, problems);
  if (value.kind === undefined) problems.push(`${name}.kind is required`);
  let times: number | 'always' = 1;
  if (value.times === 'always') times = 'always';
  else if (value.times !== undefined) times = wholeNumber(value.times, `${name}.times`, problems, 1, 1_000_000) ?? 1;
  const processed = flag(value.processed, `${name}.processed`, problems) ?? false;
  if (processed && kind === 'refuse') problems.push(`${name}.processed does not apply to a refusal (a refused call does nothing)`);
  const code = wholeNumber(value.code, `${name}.code`, problems, 1, 999_999) ?? 99;
  let message = 'Servicio no disponible temporalmente (rechazo simulado)';
  if (value.message !== undefined) {
    if (typeof value.message !== 'string' || value.message.length > 500) problems.push(`${name}.message must be a text of at most 500 characters`);
    else message = value.message;
  }
  return kind ? { kind, times, processed, code, message } : undefined;
}

/**
 * Applies a partial update to `knobs` in place; answers the problems (nothing is changed when there
 * are any). Nested objects merge; a fault or delay set to null is cleared.
 */
export function applyKnobs(knobs: Knobs, update: unknown): string[] {
  const problems: Problems = [];
  if (!isObject(update)) return ['the body must be a JSON object of knobs'];
  const next: Knobs = structuredClone(knobs);
  const known = new Set(['tokenLifetimeMs', 'statusKey', 'refusalHttpStatus', 'batchDecision', 'batchDecisionDelayMs', 'duplicateBatchId', 'callbacks', 'faults', 'delays']);
  for (const key of Object.keys(update)) if (!known.has(key)) problems.push(`unknown knob ${key}`);

  next.tokenLifetimeMs = wholeNumber(update.tokenLifetimeMs, 'tokenLifetimeMs', problems, 1, 7 * 24 * 3600 * 1000) ?? next.tokenLifetimeMs;
  next.statusKey = oneOf(update.statusKey, ['statusQRCode', 'statusQrCode'] as const, 'statusKey', problems) ?? next.statusKey;
  const refusal = wholeNumber(update.refusalHttpStatus, 'refusalHttpStatus', problems, 200, 499);
  if (refusal === 401) problems.push('refusalHttpStatus cannot be 401: that status means "token expired" to a client');
  else if (refusal !== undefined) next.refusalHttpStatus = refusal;
  next.batchDecision = oneOf(update.batchDecision, ['auto', 'hold'] as const, 'batchDecision', problems) ?? next.batchDecision;
  next.batchDecisionDelayMs = wholeNumber(update.batchDecisionDelayMs, 'batchDecisionDelayMs', problems) ?? next.batchDecisionDelayMs;
  next.duplicateBatchId = oneOf(update.duplicateBatchId, ['refuse', 'accept'] as const, 'duplicateBatchId', problems) ?? next.duplicateBatchId;

  if (update.callbacks !== undefined) {
    const c = update.callbacks;
    if (!isObject(c)) problems.push('callbacks must be an object');
    else {
      const known = Object.keys(next.callbacks);
      for (const key of Object.keys(c)) if (!known.includes(key)) problems.push(`unknown knob callbacks.${key}`);
      const n = next.callbacks;
      n.dropNext = wholeNumber(c.dropNext, 'callbacks.dropNext', problems, 0, 1_000_000) ?? n.dropNext;
      n.duplicate = flag(c.duplicate, 'callbacks.duplicate', problems) ?? n.duplicate;
      n.delayMs = wholeNumber(c.delayMs, 'callbacks.delayMs', problems) ?? n.delayMs;
      n.outOfOrder = flag(c.outOfOrder, 'callbacks.outOfOrder', problems) ?? n.outOfOrder;
      n.outOfOrderWindowMs = wholeNumber(c.outOfOrderWindowMs, 'callbacks.outOfOrderWindowMs', problems) ?? n.outOfOrderWindowMs;
      n.contradictNext = wholeNumber(c.contradictNext, 'callbacks.contradictNext', problems, 0, 1_000_000) ?? n.contradictNext;
      n.contradictAfterMs = wholeNumber(c.contradictAfterMs, 'callbacks.contradictAfterMs', problems) ?? n.contradictAfterMs;
      n.retries = wholeNumber(c.retries, 'callbacks.retries', problems, 0, 20) ?? n.retries;
      n.retryBaseMs = wholeNumber(c.retryBaseMs, 'callbacks.retryBaseMs', problems) ?? n.retryBaseMs;
      n.timeoutMs = wholeNumber(c.timeoutMs, 'callbacks.timeoutMs', problems, 1) ?? n.timeoutMs;
    }
  }

  for (const [group, target] of [['faults', next.faults], ['delays', next.delays]] as const) {
    const given = update[group];
    if (given === undefined) continue;
    if (!isObject(given)) {
      problems.push(`${group} must be an object keyed by operation (${OPERATIONS.join(', ')})`);
      continue;
    }
    for (const [op, value] of Object.entries(given)) {
      if (!(OPERATIONS as readonly string[]).includes(op)) {
        problems.push(`${group}.${op}: unknown operation (one of ${OPERATIONS.join(', ')})`);
        continue;
      }
      const operation = op as Operation;
      if (value === null || (group === 'delays' && value === 0)) {
        delete target[operation];
      } else if (group === 'faults') {
        const fault = parseFault(value, `faults.${op}`, problems);
        if (fault) next.faults[operation] = fault;
      } else {
        const ms = wholeNumber(value, `delays.${op}`, problems, 0, 10 * 60 * 1000);
        if (ms !== undefined) next.delays[operation] = ms;
      }
    }
  }

  if (problems.length === 0) Object.assign(knobs, next);
  return problems;
}

/** Takes one use of the operation's fault, if any: the fault to apply to this call. */
export function takeFault(knobs: Knobs, operation: Operation): Fault | undefined {
  const fault = knobs.faults[operation];
  if (!fault) return undefined;
  if (fault.times !== 'always') {
    fault.times -= 1;
    if (fault.times <= 0) delete knobs.faults[operation];
  }
  return { ...fault };
}
