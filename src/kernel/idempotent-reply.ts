// Sends the result of runIdempotent: the stored or fresh status and body, marked when replayed.
import type { FastifyReply } from 'fastify';
import type { IdempotentResult } from '../idempotency/service.ts';

export function sendIdempotentResult(reply: FastifyReply, result: IdempotentResult): FastifyReply {
  if (result.replayed) reply.header('Idempotent-Replayed', 'true');
  return reply.code(result.statusCode).send(result.body);
}
