// The HTTP side of idempotency, the same on every route that takes an Idempotency-Key
// (docs/architecture.md#conventions): the route names its scope — the caller, the route's name (a
// constant its service exports) and the validated key — and the service runs the work through
// runIdempotent; the route then sends the stored or fresh answer, marked when replayed.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { callerScope } from '../kernel/principal.ts';
import type { IdempotencyScope, IdempotentResult } from './service.ts';

/** The key's scope, or null when the request has no Idempotency-Key (routes where it is optional). */
export function idempotencyScopeOf(request: FastifyRequest, route: string): IdempotencyScope | null {
  if (request.idempotencyKey === null || request.principal === null) return null;
  return { caller: callerScope(request.principal), route, key: request.idempotencyKey };
}

/** The scope on a route that requires the key (the route guard has answered 400 without one). */
export function requiredIdempotencyScopeOf(request: FastifyRequest, route: string): IdempotencyScope {
  const scope = idempotencyScopeOf(request, route);
  if (!scope) throw new Error(`${route} reached without an Idempotency-Key`);
  return scope;
}

export function sendIdempotentResult(reply: FastifyReply, result: IdempotentResult): FastifyReply {
  if (result.replayed) reply.header('Idempotent-Replayed', 'true');
  return reply.code(result.statusCode).send(result.body);
}
