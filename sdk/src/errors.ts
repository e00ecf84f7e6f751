// What a call throws: an ApiError when the service answered with an error, carrying the contract's
// `type`, `code`, `message` and, for a 422, each failing field. Network failures that survive the
// retries are thrown as they came from fetch (a TypeError whose `cause` says why).
import type { ErrorBody, ErrorCode, FieldError, SimpleQr } from './types.ts';

export class ApiError extends Error {
  override readonly name = 'ApiError';
  /** The HTTP status. */
  readonly status: number;
  readonly type: string;
  /** The contract's code; `UNEXPECTED_RESPONSE` when something between (a proxy) answered instead of the service. */
  readonly code: ErrorCode | 'UNEXPECTED_RESPONSE';
  /** For a 422: each failing field, its code and message. Empty otherwise. */
  readonly errors: FieldError[];
  /** The X-Request-Id of the answer: quote it to the operator. */
  readonly requestId: string | null;

  constructor(status: number, body: Omit<ErrorBody, 'code'> & { code: ApiError['code'] }, requestId: string | null) {
    super(body.message);
    this.status = status;
    this.type = body.type;
    this.code = body.code;
    this.errors = body.errors ?? [];
    this.requestId = requestId;
  }
}

/** `error` is an ApiError (with `code`, when given). */
export function isApiError(error: unknown, code?: ErrorCode): error is ApiError {
  return error instanceof ApiError && (code === undefined || error.code === code);
}

/** waitUntilPaid: the QR can no longer be paid (canceled by the merchant, or expired). */
export class QrNotPaidError extends Error {
  override readonly name = 'QrNotPaidError';
  constructor(readonly qr: SimpleQr) {
    super(`The QR ${qr.id} was not paid: it is ${qr.status}${qr.cancel_reason ? ` (${qr.cancel_reason})` : ''}.`);
  }
}

/** The ApiError for an error answer; a body that is not the contract's (a proxy's page) is kept as its message. */
export function apiErrorOf(response: Response, body: unknown): ApiError {
  const requestId = response.headers.get('x-request-id');
  if (isErrorBody(body)) return new ApiError(response.status, body, requestId);
  const text = typeof body === 'string' ? body : JSON.stringify(body) ?? '';
  return new ApiError(response.status, { type: 'api_error', code: 'UNEXPECTED_RESPONSE', message: `HTTP ${response.status}: ${text.slice(0, 200)}` }, requestId);
}

function isErrorBody(body: unknown): body is ErrorBody {
  return typeof body === 'object' && body !== null && typeof (body as ErrorBody).code === 'string' && typeof (body as ErrorBody).message === 'string';
}
