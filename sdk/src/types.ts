// Named types for what the API answers, read off the generated OpenAPI types (generated/openapi.ts) —
// never written out by hand, so they follow the service.
import type { components, paths } from './generated/openapi.ts';

type Json<Response> = Response extends { content: { 'application/json': infer Body } } ? Body : never;
type Responses<Path extends keyof paths, Method extends keyof paths[Path]> =
  paths[Path][Method] extends { responses: infer R } ? R : never;
/** The JSON body of `Method Path`'s answer with `Status`. */
export type ResponseBody<Path extends keyof paths, Method extends keyof paths[Path], Status extends number = 200> =
  Json<Responses<Path, Method>[Status & keyof Responses<Path, Method>]>;
/** The JSON body `Method Path` takes. */
export type RequestBody<Path extends keyof paths, Method extends keyof paths[Path]> =
  paths[Path][Method] extends { requestBody?: infer B } ? Json<NonNullable<B>> : never;
/** The query parameters `GET Path` takes. */
export type Query<Path extends keyof paths> = paths[Path] extends { get: { parameters: { query?: infer Q } } } ? NonNullable<Q> : never;

/** A list's `meta`. */
export type PageMeta = ResponseBody<'/api/v2/transfers', 'get'>['meta'];

export type SimpleQr = ResponseBody<'/api/v2/simple-qrs/{id}', 'get'>;
export type SimpleQrCreate = RequestBody<'/api/v2/simple-qrs', 'post'>;
export type SimpleQrStatus = SimpleQr['status'];
export type Payment = ResponseBody<'/api/v2/simple-qrs/{id}/payments', 'get'>['data'][number];
export type Transfer = ResponseBody<'/api/v2/transfers/{id}', 'get'>;
export type TransferCreate = RequestBody<'/api/v2/transfers', 'post'>;
export type Refund = ResponseBody<'/api/v2/refunds/{id}', 'get'>;
export type RefundCreate = RequestBody<'/api/v2/refunds', 'post'>;
export type Bank = ResponseBody<'/api/v2/banks', 'get'>['data'][number];
export type Balance = ResponseBody<'/api/v2/balance', 'get'>;
export type Movement = ResponseBody<'/api/v2/balance/movements', 'get'>['data'][number];
export type Statement = ResponseBody<'/api/v2/balance/statement', 'get'>;
export type WebhookEndpoint = ResponseBody<'/api/v2/webhook-endpoints/{id}', 'get'>;
export type WebhookEndpointCreate = RequestBody<'/api/v2/webhook-endpoints', 'post'>;
export type WebhookEndpointUpdate = RequestBody<'/api/v2/webhook-endpoints/{id}', 'patch'>;
/** A webhook endpoint as created or rotated: the only answers that show its `secret`. */
export type WebhookEndpointWithSecret = ResponseBody<'/api/v2/webhook-endpoints', 'post', 201>;
export type Event = ResponseBody<'/api/v2/events/{id}', 'get'>;
/** What a webhook delivers: the event as `GET /events/{id}` shows it, without its delivery attempts. */
export type WebhookEvent = Omit<Event, 'attempts'>;
export type OnboardingIntent = ResponseBody<'/api/v2/onboarding/intent/{code}', 'get'>;
export type OnboardingIntentCreate = RequestBody<'/api/v2/onboarding/intent', 'post'>;

/** Every error body: `type`, `code`, `message`, and for a 422 the failing fields. */
export type ErrorBody = components['schemas']['Error'];
export type ErrorCode = ErrorBody['code'];
export type FieldError = NonNullable<ErrorBody['errors']>[number];
