// The one error catalogue of docs/api-reference.md#error-codes (docs/architecture.md, habit 6): every error the API answers is an ApiError built
// from a code of this table, and the error handler is the only place that renders them.

export const ERROR_CATALOGUE = {
  MALFORMED_JSON: { status: 400, type: 'invalid_request_error', message: 'The request body is not valid JSON.' },
  IDEMPOTENCY_KEY_MISSING: { status: 400, type: 'invalid_request_error', message: 'This request needs an Idempotency-Key header (a UUID v4).' },
  IDEMPOTENCY_KEY_INVALID: { status: 400, type: 'invalid_request_error', message: 'The Idempotency-Key header must be a UUID v4.' },
  INSUFFICIENT_FUNDS: { status: 400, type: 'business_logic_error', message: 'The amount exceeds the available balance.' },
  API_KEY_MISSING: { status: 401, type: 'authentication_error', message: 'Send your API key in the X-API-KEY header.' },
  API_KEY_INVALID: { status: 401, type: 'authentication_error', message: 'The API key is unknown or has been revoked.' },
  ADMIN_TOKEN_INVALID: { status: 401, type: 'authentication_error', message: 'Send the operator token as Authorization: Bearer <ADMIN_TOKEN>.' },
  BUSINESS_CODE_MISMATCH: { status: 403, type: 'permission_error', message: 'business_code does not match the merchant of the API key.' },
  MODULE_NOT_ENABLED: { status: 403, type: 'permission_error', message: 'The ACH transfer module is not enabled for this merchant.' },
  MASTER_KEY_REQUIRED: { status: 403, type: 'permission_error', message: 'This endpoint needs a partner master key.' },
  MERCHANT_KEY_REQUIRED: { status: 403, type: 'permission_error', message: 'This endpoint needs a merchant API key.' },
  MERCHANT_SUSPENDED: { status: 403, type: 'permission_error', message: 'The merchant of this API key is suspended.' },
  KEY_SCOPE_INSUFFICIENT: { status: 403, type: 'permission_error', message: 'This key may not use this endpoint: terminal keys work only with QRs and their payments.' },
  NOT_FOUND: { status: 404, type: 'invalid_request_error', message: 'No such resource.' },
  IDEMPOTENCY_KEY_IN_USE: { status: 409, type: 'idempotency_error', message: 'A request with this Idempotency-Key is still being processed; retry shortly.' },
  QR_NOT_PAYABLE: { status: 409, type: 'business_logic_error', message: 'This QR does not accept payments.' },
  QR_NOT_CANCELABLE: { status: 409, type: 'business_logic_error', message: 'This QR is already paid or canceled.' },
  TRANSFER_NOT_CANCELABLE: { status: 409, type: 'business_logic_error', message: 'Only a PENDING transfer can be canceled.' },
  REFUND_EXCEEDS_PAYMENT: { status: 409, type: 'business_logic_error', message: 'The refund is more than what is left to refund of the payment.' },
  REFUND_WINDOW_CLOSED: { status: 409, type: 'business_logic_error', message: 'The payment is older than the refund window.' },
  PAYLOAD_TOO_LARGE: { status: 413, type: 'invalid_request_error', message: 'The request body is too large (at most 64 KiB; 8 KiB for a hosted page\'s form).' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, type: 'invalid_request_error', message: 'Send the body as application/json (a hosted page takes a form post).' },
  VALIDATION_FAILED: { status: 422, type: 'validation_error', message: 'The request has invalid fields; see errors.' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, type: 'idempotency_error', message: 'This Idempotency-Key was used with a different request body.' },
  RATE_LIMITED: { status: 429, type: 'rate_limit_error', message: 'Too many requests for this API key; retry after the time in Retry-After.' },
  INTERNAL_ERROR: { status: 500, type: 'api_error', message: 'Something went wrong on our side; the request id identifies it in our logs.' },
  SERVICE_UNAVAILABLE: { status: 503, type: 'api_error', message: 'The service cannot reach its database; retry after the time in Retry-After.' },
} as const satisfies Record<string, { status: number; type: string; message: string }>;

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

/** A 422 listing every failing field. */
export function validationError(errors: FieldError[]): ApiError {
  return new ApiError('VALIDATION_FAILED', { errors });
}

export const notFound = (what = 'resource'): ApiError => new ApiError('NOT_FOUND', { message: `No such ${what}.` });

/** Seconds a client should wait when the database is unreachable or not ready. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** 503 with Retry-After: the database cannot be reached, or is not ready yet. */
export function serviceUnavailable(message?: string): ApiError {
  return new ApiError('SERVICE_UNAVAILABLE', { message, headers: { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS) } });
}
