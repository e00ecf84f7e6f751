// The only renderer of errors: every failure leaves as { type, code, message[, errors] } with the
// status of the catalogue, and nothing internal (stack, SQL, driver text) reaches the client.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../db/database.ts';
import { ApiError, serviceUnavailable, validationError } from '../kernel/errors.ts';
import { describeError } from '../kernel/logging.ts';
import { isHostedPage, sendErrorPage } from '../kernel/page-kit.ts';
import { fieldErrorsFromAjv, unknownFieldErrors } from '../kernel/validation.ts';

/** Fastify's own errors that are the client's doing, mapped to the catalogue. */
const FASTIFY_CLIENT_ERRORS: Record<string, () => ApiError> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => new ApiError('UNSUPPORTED_MEDIA_TYPE'),
  FST_ERR_CTP_INVALID_TYPE: () => new ApiError('UNSUPPORTED_MEDIA_TYPE'),
  FST_ERR_CTP_BODY_TOO_LARGE: () => new ApiError('PAYLOAD_TOO_LARGE'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new ApiError('MALFORMED_JSON', { message: 'The body does not match its Content-Length.' }),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new ApiError('MALFORMED_JSON'),
  // A path that cannot be decoded, or a path parameter past the router's limit, names no resource.
  FST_ERR_BAD_URL: () => new ApiError('NOT_FOUND', { message: 'The path is not a valid URL.' }),
  FST_ERR_MAX_PARAM_LENGTH: () => new ApiError('NOT_FOUND', { message: 'The path is not a valid URL.' }),
};

export function toApiError(error: unknown, request: FastifyRequest): ApiError {
  if (error instanceof ApiError) return error;
  const fastifyError = error as Partial<FastifyError>;
  // A path whose parameters fail their schema (`/transfers/1e3`, `/transfers/0x1`, an id holding U+0000)
  // names no resource: 404, as an unknown id is, and not a 422 about a field the caller never sent.
  if (Array.isArray(fastifyError.validation) && fastifyError.validationContext === 'params') {
    return new ApiError('NOT_FOUND');
  }
  if (Array.isArray(fastifyError.validation)) {
    return validationError([
      ...unknownFieldErrors(request.forbiddenFields ?? []),
      ...fieldErrorsFromAjv(fastifyError.validation as never),
    ]);
  }
  if (typeof fastifyError.code === 'string' && FASTIFY_CLIENT_ERRORS[fastifyError.code]) {
    return FASTIFY_CLIENT_ERRORS[fastifyError.code]!();
  }
  // A client that hung up while sending its body: the read fails with ECONNRESET, which from a database
  // socket would mean an outage. Its own request says which it was.
  if (request.raw.readableAborted) return new ApiError('MALFORMED_JSON', { message: 'The request body ended before its Content-Length.' });
  // The docs' static files refuse a path that climbs out of their folder (`/docs/static/%2e%2e/…`) with an
  // http-errors 403 or 404: a path that names no file, not a failure of the service.
  if (isStaticFileRefusal(error)) return new ApiError('NOT_FOUND', { message: 'No such file.' });
  if (isDatabaseUnavailable(error)) {
    return serviceUnavailable();
  }
  return new ApiError('INTERNAL_ERROR');
}

/** An http-errors client error (a 4xx `status` with `expose`), as @fastify/static's file sender raises. */
function isStaticFileRefusal(error: unknown): boolean {
  const { status, expose } = error as { status?: unknown; expose?: unknown };
  return expose === true && typeof status === 'number' && status >= 400 && status < 500;
}

export async function handleError(this: unknown, error: unknown, request: FastifyRequest, reply: FastifyReply) {
  const apiError = toApiError(error, request);
  // A client that hung up mid-body is left to read nothing; no error of the service's either.
  if (request.raw.readableAborted) request.log.info({ status: apiError.status }, 'request abandoned: the client closed the connection while sending its body');
  // A 500 is a defect, logged as an error. A 503 is the database — or with a bank's rail, the bank — being
  // away, which its own background errors already report: each request it turns away is a warning, or an
  // outage would flood the log. The line names which of the two it was.
  else if (apiError.status === 503) {
    request.log.warn({ error: describeError(error), status: 503 },
      apiError.code === 'RAIL_UNAVAILABLE' ? 'request turned away: the bank did not answer' : 'request turned away: database unavailable');
  }
  else if (apiError.status >= 500) request.log.error({ error: describeError(error), status: apiError.status }, 'request failed');
  for (const [name, value] of Object.entries(apiError.headers)) reply.header(name, value);
  // A person on a hosted page gets a page in their language; the same status and headers (Retry-After).
  if (isHostedPage(request)) return sendErrorPage(request, reply, apiError.status);
  return reply.code(apiError.status).type('application/json; charset=utf-8').send(apiError.toBody());
}

export async function handleNotFound(request: FastifyRequest, reply: FastifyReply) {
  // The path only: an absolute-form request line (`GET http://evil.example/x HTTP/1.1`) names a host the
  // answer must not repeat.
  const path = (request.url.split('?')[0] ?? '').replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '');
  const error = new ApiError('NOT_FOUND', { message: `No route ${request.method} ${path.slice(0, 200)}.` });
  return reply.code(error.status).send(error.toBody());
}

/**
 * Errors Fastify raises before routing (a path it cannot decode), answered like any other error and
 * with the request id, instead of Fastify's own body shape.
 */
export function handleFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('X-Request-Id', request.id);
  void handleError(error, request, reply);
}
