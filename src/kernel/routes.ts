// The app as routes see it (Fastify over the TypeBox type provider),
// and the per-route options the HTTP layer reads (who may call, idempotency, module, terminal keys). The
// capabilities declare routes with these; src/http composes them into the app and enforces the options.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AuthRequirement, Principal } from './principal.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route (default: anyone). */
    auth?: AuthRequirement;
    /** Idempotency-Key header: required (400 when absent) or optional. */
    idempotency?: 'required' | 'optional';
    /** A module the merchant must have enabled (403 MODULE_NOT_ENABLED). */
    module?: 'ach';
    /** Terminal keys may call the route (QRs and their payments); elsewhere they get 403 KEY_SCOPE_INSUFFICIENT. */
    terminal?: true;
    /** The route answers with an ETag and honours If-None-Match (304): documented in /openapi.json. */
    etag?: true;
    /** The answer shows a secret (a new key, a signing secret): no cache may keep it (Cache-Control: no-store). */
    showsSecret?: true;
  }
  interface FastifyRequest {
    principal: Principal | null;
    /** The Idempotency-Key header, validated and lower-cased. */
    idempotencyKey: string | null;
    /** Prototype-poisoning keys removed from the body, answered as 422 unknown_field. */
    forbiddenFields: string[] | null;
  }
}

/** The app, and every scope of it, as routes see it. */
export type App = FastifyInstance<Server, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

