// The one error catalogue of docs/api-reference.md#error-codes (docs/architecture.md, habit 6): every error the API answers is an ApiError built
// from a code of this table, and the error handler is the only place that renders them. `when` is the
// reference's column: the table in docs/ is generated from this one (`npm run docs:errors`).

export const ERROR_CATALOGUE = {
  MALFORMED_REQUEST: { status: 400, type: 'invalid_request_error', message: 'The request is not valid HTTP.', when: 'bytes the HTTP parser cannot read as a request (answered before any route; the connection is closed)' },
  MALFORMED_JSON: { status: 400, type: 'invalid_request_error', message: 'The request body is not valid JSON.', when: 'the body is not valid JSON, is nested deeper than 32 levels, or does not match its `Content-Length`' },
  IDEMPOTENCY_KEY_MISSING: { status: 400, type: 'invalid_request_error', message: 'This request needs an Idempotency-Key header (a UUID v4).', when: 'the route requires an `Idempotency-Key` header and none was sent' },
  IDEMPOTENCY_KEY_INVALID: { status: 400, type: 'invalid_request_error', message: 'The Idempotency-Key header must be a UUID v4.', when: 'the `Idempotency-Key` header is not a UUID v4' },
  INSUFFICIENT_FUNDS: { status: 400, type: 'business_logic_error', message: 'The amount exceeds the available balance.', when: 'a transfer\'s or refund\'s amount exceeds the available balance (stored and replayed for its idempotency key)' },
  API_KEY_MISSING: { status: 401, type: 'authentication_error', message: 'Send your API key in the X-API-KEY header.', when: 'no `X-API-KEY` header, or an empty one' },
  API_KEY_INVALID: { status: 401, type: 'authentication_error', message: 'The API key is unknown or has been revoked.', when: 'the key is unknown, revoked or malformed, or was minted for the other mode' },
  ADMIN_TOKEN_INVALID: { status: 401, type: 'authentication_error', message: 'Send the operator token as Authorization: Bearer <ADMIN_TOKEN>.', when: 'an `/admin/v1` request without `Authorization: Bearer <ADMIN_TOKEN>` or with a wrong token' },
  BUSINESS_CODE_MISMATCH: { status: 403, type: 'permission_error', message: 'business_code does not match the merchant of the API key.', when: 'the `business_code` in the body is not the merchant of the key' },
  MODULE_NOT_ENABLED: { status: 403, type: 'permission_error', message: 'The ACH transfer module is not enabled for this merchant.', when: 'creating a transfer, or setting a daily or weekly payout schedule, for a merchant without the ACH module' },
  MASTER_KEY_REQUIRED: { status: 403, type: 'permission_error', message: 'This endpoint needs a partner master key.', when: 'a partner route called with a merchant key' },
  MERCHANT_KEY_REQUIRED: { status: 403, type: 'permission_error', message: 'This endpoint needs a merchant API key.', when: 'a merchant route called with a partner master key' },
  MERCHANT_SUSPENDED: { status: 403, type: 'permission_error', message: 'The merchant of this API key is suspended.', when: 'the merchant of the key is suspended' },
  KEY_SCOPE_INSUFFICIENT: { status: 403, type: 'permission_error', message: 'This key may not use this endpoint: terminal keys work only with QRs and their payments.', when: 'a terminal key on a route outside QRs and their payments' },
  NOT_FOUND: { status: 404, type: 'invalid_request_error', message: 'No such resource.', when: 'unknown route, unknown id, an id of another merchant or partner, a non-canonical integer in the path, a sandbox route in live mode, `/admin/v1` while `ADMIN_TOKEN` is unset' },
  IDEMPOTENCY_KEY_IN_USE: { status: 409, type: 'idempotency_error', message: 'A request with this Idempotency-Key is still being processed; retry shortly.', when: 'a request with the same `Idempotency-Key` is still executing' },
  QR_NOT_PAYABLE: { status: 409, type: 'business_logic_error', message: 'This QR does not accept payments.', when: 'a payment for a QR that is `PAID`, `CANCELED`, past its expiry, or of a suspended merchant' },
  QR_NOT_CANCELABLE: { status: 409, type: 'business_logic_error', message: 'This QR is already paid or canceled.', when: 'cancel of a QR that is already `PAID` or `CANCELED`' },
  TRANSFER_NOT_CANCELABLE: { status: 409, type: 'business_logic_error', message: 'Only a PENDING transfer can be canceled.', when: 'cancel of a transfer that is no longer `PENDING`' },
  REFUND_EXCEEDS_PAYMENT: { status: 409, type: 'business_logic_error', message: 'The refund is more than what is left to refund of the payment.', when: 'a refund for more than what is left to refund of its payment' },
  REFUND_NOT_PENDING: { status: 409, type: 'business_logic_error', message: 'The refund is no longer PENDING: it was resolved already.', when: 'the operator resolves a refund that is no longer `PENDING`' },
  BATCH_NOT_RESOLVABLE: { status: 409, type: 'business_logic_error', message: 'The batch cannot be resolved: its upload is still waiting for an answer, was refused, or the batch was resolved already.', when: 'the operator resolves a transfer batch that is not `uploaded` or `unknown`, or was resolved already' },
  RAIL_NOT_RECONCILABLE: { status: 409, type: 'business_logic_error', message: 'The configured rail has no bank to reconcile with (RAIL=sandbox): reconciliation compares the journal with a bank\'s records.', when: 'a reconciliation asked of a service on the sandbox rail (or a live service without a rail): there is no bank whose records to compare with' },
  REFUND_WINDOW_CLOSED: { status: 409, type: 'business_logic_error', message: 'The payment is older than the refund window.', when: 'a refund of a payment older than `REFUND_WINDOW`' },
  USER_EXISTS: { status: 409, type: 'business_logic_error', message: 'This email already has a console account.', when: 'inviting to the merchant console an email that already has an account — active or disabled, at this merchant or another (one email, one account); an invitation of the same merchant not accepted yet is sent again instead' },
  REQUEST_TIMEOUT: { status: 408, type: 'invalid_request_error', message: 'The request did not arrive in time.', when: 'a request whose headers took longer than `HTTP_HEADERS_TIMEOUT` (15 s) or whose whole body took longer than `HTTP_REQUEST_TIMEOUT` (30 s) to arrive (the connection is closed)' },
  PAYLOAD_TOO_LARGE: { status: 413, type: 'invalid_request_error', message: 'The request body is too large (at most 64 KiB; 8 KiB for a hosted page\'s form).', when: 'the body is larger than 64 KiB (8 KiB for a hosted form post)' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, type: 'invalid_request_error', message: 'Send the body as application/json (a hosted page takes a form post).', when: 'a body that is not `application/json` (on hosted pages: not a form post)' },
  HEADERS_TOO_LARGE: { status: 431, type: 'invalid_request_error', message: 'The request headers are too large.', when: 'request headers larger than Node\'s limit (16 KiB; the connection is closed)' },
  VALIDATION_FAILED: { status: 422, type: 'validation_error', message: 'The request has invalid fields; see errors.', when: 'one or more fields or query parameters are wrong; see `errors`' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, type: 'idempotency_error', message: 'This Idempotency-Key was used with a different request body.', when: 'the `Idempotency-Key` was used before with a different request' },
  RATE_LIMITED: { status: 429, type: 'rate_limit_error', message: 'Too many requests for this API key; retry after the time in Retry-After.', when: 'over the rate limit of the key, or of the client address on routes without a key; a client network locked out after ten wrong operator or metrics tokens; a connection past `CONNECTIONS_PER_ADDRESS`; an event redelivered more than 10 times in an hour; see `Retry-After`' },
  INTERNAL_ERROR: { status: 500, type: 'api_error', message: 'Something went wrong on our side; the request id identifies it in our logs.', when: 'an unexpected failure on the service\'s side; the request id identifies it in the log' },
  RAIL_REFUSED: { status: 502, type: 'api_error', message: 'The bank refused the request.', when: 'with a bank\'s rail (`RAIL=baneco`), the bank refused a call the request needed (creating a QR); the message is the bank\'s, cleaned. Nothing was created' },
  RAIL_UNAVAILABLE: { status: 503, type: 'api_error', message: 'The bank did not answer; retry after the time in Retry-After.', when: 'with a bank\'s rail, the bank did not answer a call the request needed (creating a QR) within `BANECO_TIMEOUT`, or answered something unreadable; nothing was created; see `Retry-After`' },
  SERVICE_UNAVAILABLE: { status: 503, type: 'api_error', message: 'The service cannot reach its database; retry after the time in Retry-After.', when: 'the database cannot be reached; see `Retry-After`' },
} as const satisfies Record<string, { status: number; type: string; message: string; when: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** Field codes of a 422 (docs/api-reference.md#field-codes): the type and the OpenAPI enum both come from this list. */
export const FIELD_ERROR_CODES = [
  'required', 'invalid_type', 'invalid_format', 'too_long', 'too_small', 'too_large',
  'too_many_decimals', 'invalid_value', 'unknown_field', 'unknown_bank', 'unsupported_currency',
  'expiration_in_past',
] as const;
export type FieldErrorCode = (typeof FIELD_ERROR_CODES)[number];

export interface FieldError {
  /** Dotted path of the field (`destination.account_number`). */
  field: string;
  code: FieldErrorCode;
  message: string;
}

export interface ErrorBody {
  type: string;
  code: ErrorCode;
  message: string;
  errors?: FieldError[];
}

export class ApiError extends Error {
  readonly status: number;
  readonly type: string;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string>;

  constructor(
    readonly code: ErrorCode,
    options: { message?: string; errors?: FieldError[]; headers?: Record<string, string> } = {},
  ) {
    const entry = ERROR_CATALOGUE[code];
    super(options.message ?? entry.message);
    this.name = 'ApiError';
    this.status = entry.status;
    this.type = entry.type;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
  }

  toBody(): ErrorBody {
    return {
      type: this.type,
      code: this.code,
      message: this.message,
      ...(this.errors ? { errors: this.errors } : {}),
    };
  }
}

/**
 * Most failing fields a 422 lists. A 64 KiB body can hold thousands of wrong fields (unknown keys, say),
 * and one entry each made a 5.9 MB answer; past this many the message says how many there were.
 */
export const MAX_LISTED_FIELD_ERRORS = 25;

/** A 422 listing each failing field, the first MAX_LISTED_FIELD_ERRORS of them. */
export function validationError(errors: FieldError[]): ApiError {
  if (errors.length <= MAX_LISTED_FIELD_ERRORS) return new ApiError('VALIDATION_FAILED', { errors });
  return new ApiError('VALIDATION_FAILED', {
    errors: errors.slice(0, MAX_LISTED_FIELD_ERRORS),
    message: `The request has ${errors.length} invalid fields; the first ${MAX_LISTED_FIELD_ERRORS} are listed in errors.`,
  });
}

export const notFound = (what = 'resource'): ApiError => new ApiError('NOT_FOUND', { message: `No such ${what}.` });

/** Seconds a client should wait when the database is unreachable or not ready. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** 503 with Retry-After: the database cannot be reached, or is not ready yet. */
export function serviceUnavailable(message?: string): ApiError {
  return new ApiError('SERVICE_UNAVAILABLE', { message, headers: { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS) } });
}

/** Seconds a client should wait before retrying a request the bank did not answer. */
export const RAIL_RETRY_AFTER_SECONDS = 10;

/** 503 with Retry-After: the bank did not answer a call the request needed. */
export function railUnavailable(): ApiError {
  return new ApiError('RAIL_UNAVAILABLE', { headers: { 'Retry-After': String(RAIL_RETRY_AFTER_SECONDS) } });
}

/** 502: the bank refused a call the request needed; `bankMessage` is already cleaned by the rail. */
export function railRefused(bankMessage: string): ApiError {
  return new ApiError('RAIL_REFUSED', { message: bankMessage === '' ? ERROR_CATALOGUE.RAIL_REFUSED.message : `The bank refused the request: ${bankMessage}` });
}
