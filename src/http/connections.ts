// What a client may hold of the server before it has sent a whole request: the audit held a connection
// forever with headers and no body (Fastify's requestTimeout of 0 turns Node's own limit off). Every
// connection must deliver its headers within HTTP_HEADERS_TIMEOUT (15 s) and its whole request within
// HTTP_REQUEST_TIMEOUT (30 s; a 64 KiB body at 2 KiB/s); an idle connection closes after IDLE_TIMEOUT_MS, which outlives the longest long
// poll (30 s) and Fastify's keep-alive (72 s, longer than common load balancers' 60 s idle); and one
// client network holds at most CONNECTIONS_PER_ADDRESS (256) connections at once. Behind a proxy the limit
// counts the proxy's connections, so addresses TRUST_PROXY names are exempt — the proxy must buffer
// request bodies and enforce its own limits (docs/going-live.md).
import type { Server, Socket } from 'node:net';
import proxyAddr from '@fastify/proxy-addr';
import { clientNetworkOf } from '../ip.ts';
import { ApiError, type ErrorCode } from '../kernel/errors.ts';

/** A connection that carries no byte either way for this long is closed. */
export const IDLE_TIMEOUT_MS = 75_000;

/** Fastify's server options for the limits above (HTTP_HEADERS_TIMEOUT, HTTP_REQUEST_TIMEOUT), checked every second. */
export function serverTimeouts(headersTimeoutMs: number, requestTimeoutMs: number) {
  return {
    connectionTimeout: IDLE_TIMEOUT_MS,
    requestTimeout: requestTimeoutMs,
    http: { headersTimeout: headersTimeoutMs, connectionsCheckingInterval: 1_000 },
  };
}

/**
 * Counts each client network's open connections and refuses one past `perAddress` with a 429 in the
 * contract's shape, written straight to the socket (no request has been read yet).
 */
export function limitConnectionsPerAddress(server: Server, perAddress: number, trustedProxies: string[]): void {
  const isTrustedProxy = trustedProxies.length > 0 ? proxyAddr.compile(trustedProxies) : () => false;
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined || isTrustedProxy(address, 0)) return;
    const network = clientNetworkOf(address);
    const count = (open.get(network) ?? 0) + 1;
    if (count > perAddress) {
      writeRefusal(socket, 'RATE_LIMITED', `Too many connections from this address (at most ${perAddress} at once).`, { 'Retry-After': '1' });
      return;
    }
    open.set(network, count);
    socket.once('close', () => {
      const left = (open.get(network) ?? 1) - 1;
      if (left === 0) open.delete(network);
      else open.set(network, left);
    });
  });
}

/**
 * Answers what Node's HTTP parser refuses before Fastify sees a request — a request too slow (408),
 * headers too large (431), bytes that are not HTTP (400) — with the contract's error body, instead of
 * Fastify's own shape. A reset connection gets nothing: nobody is there to read it.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') writeRefusal(socket, 'REQUEST_TIMEOUT');
  else if (error.code === 'HPE_HEADER_OVERFLOW') writeRefusal(socket, 'HEADERS_TOO_LARGE');
  else writeRefusal(socket, 'MALFORMED_REQUEST');
}

const REASONS: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 429: 'Too Many Requests', 431: 'Request Header Fields Too Large' };

function writeRefusal(socket: Socket, code: ErrorCode, message?: string, headers: Record<string, string> = {}): void {
  const error = new ApiError(code, { message });
  const body = JSON.stringify(error.toBody());
  const lines = [
    `HTTP/1.1 ${error.status} ${REASONS[error.status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  if (socket.writable) socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
  socket.destroySoon?.();
}
