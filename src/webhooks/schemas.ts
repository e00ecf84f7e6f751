// Schemas of the webhook endpoints API and the events API (docs/api-reference.md#webhooks-and-events).
import { Type, type Static } from '@sinclair/typebox';
import { EVENT_TYPES } from '../events/service.ts';
import { PaginationQueryProperties } from '../kernel/pagination.ts';
import { StrictObject, StringEnum, Timestamp } from '../kernel/schemas.ts';

export const MAX_URL_LENGTH = 2048;

const EventFilterItem = StringEnum(['*', ...EVENT_TYPES] as const, { description: '"*" (every type) or an event type' });

const EndpointUrl = Type.String({
  minLength: 1,
  maxLength: MAX_URL_LENGTH,
  description: 'Absolute http(s) URL receiving POSTs; https only in live mode',
  example: 'https://shop.example.com/webhooks/payments',
});

const EventFilter = Type.Array(EventFilterItem, {
  minItems: 1,
  maxItems: EVENT_TYPES.length + 1,
  description: '["*"] (the default) or the event types this endpoint receives',
  example: ['simple_qr.payment_received', 'transfer.completed'],
});

const Description = Type.String({ maxLength: 500, description: 'Free text for your own reference' });

export const EndpointIdParams = StrictObject({ id: Type.String({ maxLength: 64, description: 'Endpoint id (we_…)' }) });

export const CreateEndpointBody = StrictObject({
  url: EndpointUrl,
  events: Type.Optional(EventFilter),
  description: Type.Optional(Description),
});
export type CreateEndpointBody = Static<typeof CreateEndpointBody>;

export const UpdateEndpointBody = StrictObject({
  url: Type.Optional(EndpointUrl),
  events: Type.Optional(EventFilter),
  description: Type.Optional(Description),
  status: Type.Optional(StringEnum(['enabled', 'disabled'] as const, { description: 'disabled stops deliveries (its pending ones fail)' })),
});
export type UpdateEndpointBody = Static<typeof UpdateEndpointBody>;

export const RotateSecretBody = StrictObject({
  expire_previous_now: Type.Optional(Type.Boolean({
    default: false,
    description: 'true: the previous secret stops signing at once (it leaked); false (the default): it keeps signing, as a second '
      + 'signature, for 24 hours. An empty body or none is {}',
  })),
});
export type RotateSecretBody = Static<typeof RotateSecretBody>;

const endpointProperties = {
  id: Type.String({ example: 'we_4kq8Yw2mVt0LxP9sRbN3aZ' }),
  url: Type.String(),
  events: Type.Array(Type.String()),
  description: Type.Union([Type.String(), Type.Null()]),
  status: StringEnum(['enabled', 'disabled'] as const),
  created_at: Timestamp(),
  updated_at: Timestamp(),
};

/** An endpoint as GET shows it: never its secret. */
export const EndpointSchema = Type.Object(endpointProperties);

/** An endpoint as create and rotate-secret answer it: the one time the secret is shown. */
export const EndpointWithSecretSchema = Type.Object({
  ...endpointProperties,
  secret: Type.String({ description: 'whsec_… signing secret; shown only on create and rotate-secret', example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }),
});

export const EndpointListQuery = StrictObject({ ...PaginationQueryProperties });

export const EventListQuery = StrictObject({
  ...PaginationQueryProperties,
  type: Type.Optional(StringEnum(EVENT_TYPES, { description: 'Only events of this type' })),
});
export type EventListQuery = Static<typeof EventListQuery>;

export const EventIdParams = StrictObject({ id: Type.String({ maxLength: 64, description: 'Event id (evt_…)' }) });

const eventProperties = {
  id: Type.String({ example: 'evt_3fA9kQ2xLm8Np0Rt5Vw7Yz1b' }),
  type: Type.String({ example: 'simple_qr.payment_received' }),
  created_at: Timestamp(),
  data: Type.Object({}, { additionalProperties: true, description: 'The resource the event reports (docs/api-reference.md#event-types)' }),
};

export const EventSchema = Type.Object(eventProperties);

export const AttemptSchema = Type.Object({
  endpoint_id: Type.String(),
  attempt: Type.Integer({ minimum: 1, description: 'Number of this attempt for this endpoint, from 1' }),
  status_code: Type.Union([Type.Integer(), Type.Null()], { description: 'HTTP status answered; null when no answer came (timeout, refused, network error)' }),
  duration_ms: Type.Integer({ minimum: 0 }),
  error: Type.Union([Type.String(), Type.Null()]),
  sent_at: Timestamp(),
});

export const EventWithAttemptsSchema = Type.Object({ ...eventProperties, attempts: Type.Array(AttemptSchema) });

export const RedeliverySchema = Type.Object({
  id: Type.String({ description: 'The event id, which is also the webhook-id of every redelivery' }),
  endpoint_ids: Type.Array(Type.String(), { description: 'Endpoints that will receive the event again, now' }),
});
