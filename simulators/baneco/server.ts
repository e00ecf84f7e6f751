// Starts the simulator: one node:http server on 127.0.0.1 serving the bank's API under `/ApiGateway/`,
// the control API under `/_control/` and the page at `/`. `startBanecoSimulator` is what tests call (on
// port 0) and what the `npm run bank` entry (cli.ts) calls with the environment's settings.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { BANK_ROUTES, type BankRoute } from './bank-api.ts';
import { CallbackDispatcher, type CallbackAttempt } from './callbacks.ts';
import { control, snapshot, type ControlContext } from './control-api.ts';
import { decryptField, encryptField, randomToken } from './crypto.ts';
import { BodyTooLarge, readBody, segment, sendJson, sendText, sleep } from './http-util.ts';
import { applyKnobs, defaultKnobs, type Fault, type Knobs, takeFault } from './knobs.ts';
import { handleForm, renderPage } from './page.ts';
import { Bank, type PayOptions, type PaymentRecord } from './state.ts';
import { CODES, Refusal } from './validate.ts';
import { contradiction, itemStatus, paymentQr } from './wire.ts';

export interface BanecoSimulatorOptions {
  /** Interface to listen on; 127.0.0.1 by default (the control API has no authentication). */
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  userName?: string;
  /** Random by default. */
  password?: string;
  /** 32 ASCII characters; random (32 hex digits) by default. */
  aesKey?: string;
  /** The merchant's account at the bank. */
  account?: string;
  /**
   * Where the merchant receives callbacks, e.g. http://127.0.0.1:3000/rails/baneco/<secret>/ (a trailing
   * slash is added when missing). null (the default) sends none: each is recorded as "skipped".
   */
  callbackBase?: string | null;
  /** Opening balance of the account in BOB; 1 000 000.00 by default. */
  openingBalance?: number;
  /** Name drawn into the QR payloads. */
  merchantName?: string;
  /** Knobs to start with (the same partial shape as POST /_control/knobs); reset returns to them. */
  knobs?: Record<string, unknown>;
  /** The bank's clock (ms since the epoch); Date.now by default. */
  now?: () => number;
  /** One line per bank call and callback try; silent by default. */
  log?: (line: string) => void;
}

export interface BanecoCredentials {
  userName: string;
  password: string;
  aesKey: string;
  account: string;
  /** The secret path segment of callbackBase when it has the form …/rails/baneco/<secret>/, else null. */
  callbackSecret: string | null;
}

export interface BanecoSimulator {
  /** http://127.0.0.1:PORT/ — the page. */
  url: string;
  /** http://127.0.0.1:PORT/ApiGateway/ — what BANECO_URL must be. */
  baseUrl: string;
  /** http://127.0.0.1:PORT/_control/ */
  controlUrl: string;
  port: number;
  credentials: BanecoCredentials;
  callbackBase: string | null;
  /** The environment variables that point the service at this simulator. */
  env: Record<string, string>;
  /** The live knobs (read them; change them with setKnobs). */
  knobs: Knobs;
  /** Same as POST /_control/knobs; throws with the problems when the update is refused. */
  setKnobs(update: Record<string, unknown>): void;
  /** Same as POST /_control/qrs/{qrId}/pay; throws the bank's refusal. */
  pay(qrId: string, options?: PayOptions): Record<string, unknown>;
  /** Same as POST /_control/batches/{batchId}/items/{batchDetailId}/decide. */
  decide(batchId: string, batchDetailId: string, status: 'ACEP' | 'RECH', descriptionStatus?: string): void;
  expireTokens(): number;
  /** Same as GET /_control/state. */
  state(): Record<string, unknown>;
  callbacks(): CallbackAttempt[];
  /** Callbacks still waiting to be sent or answered (delays, retries, in flight). */
  pendingCallbacks(): number;
  reset(): void;
  /** Closes the server and every connection (stalled ones too) and cancels timers and callbacks. */
  stop(): Promise<void>;
}

const SECRET_IN_BASE = /\/rails\/baneco\/([^/]+)\/$/;

export async function startBanecoSimulator(options: BanecoSimulatorOptions = {}): Promise<BanecoSimulator> {
  const now = options.now ?? Date.now;
  const log = options.log ?? (() => undefined);
  const aesKey = options.aesKey ?? randomToken(32, '0123456789ABCDEF');
  encryptField('check', aesKey); // throws now, not at the first request, on a key that is not 32 ASCII characters
  const callbackBase = options.callbackBase ? (options.callbackBase.endsWith('/') ? options.callbackBase : `${options.callbackBase}/`) : null;
  if (callbackBase) new URL(callbackBase); // throws on a malformed base
  const credentials: BanecoCredentials = {
    userName: options.userName ?? 'comercio-demo',
    password: options.password ?? randomToken(20),
    aesKey,
    account: options.account ?? '1041234567',
    callbackSecret: callbackBase ? (SECRET_IN_BASE.exec(new URL(callbackBase).pathname)?.[1] ?? null) : null,
  };

  const knobs = defaultKnobs();
  const startKnobs = () => {
    Object.assign(knobs, defaultKnobs());
    const problems = options.knobs ? applyKnobs(knobs, options.knobs) : [];
    if (problems.length > 0) throw new Error(`invalid knobs: ${problems.join('; ')}`);
  };
  startKnobs();

  const callbacks = new CallbackDispatcher(callbackBase, knobs, log);
  const bank = new Bank(
    {
      userName: credentials.userName, password: credentials.password, aesKey, account: credentials.account,
      openingBalanceCents: Math.round((options.openingBalance ?? 1_000_000) * 100), merchantName: options.merchantName ?? 'COMERCIO DEMO',
    },
    knobs,
    now,
    {
      paid: (payment: PaymentRecord) => callbacks.notifyPayment(paymentQr(payment)),
      decided: (batch, item) => callbacks.notifyStatus(itemStatus(batch, item), contradiction(batch, item)),
    },
  );

  const env: Record<string, string> = {};
  const timers = new Set<NodeJS.Timeout>();
  const sockets = new Set<Socket>();
  const context: ControlContext = {
    bank, knobs, callbacks, env,
    reset: () => {
      bank.reset();
      callbacks.clear();
      startKnobs();
    },
  };

  const server = http.createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      // A bug of the simulator: say so in the log, and never answer a bank call with a 5xx the knobs did not ask for.
      log(`simulator error: ${(error as Error).stack ?? String(error)}`);
      if (!response.headersSent) sendJson(response, 400, { responseCode: CODES.invalidRequest, message: 'La solicitud no pudo ser procesada' });
      else response.destroy();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('clientError', (_error, socket) => socket.destroy());

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://simulator.invalid');
    const path = url.pathname;
    if (path.startsWith('/ApiGateway/')) return bankCall(request, response, path.slice('/ApiGateway/'.length), url.searchParams);
    if (path.startsWith('/_control/')) return controlCall(request, response, path.slice('/_control/'.length));
    if (path === '/' && request.method === 'GET') {
      return sendText(response, 200, renderPage(bank, callbacks.attempts, url.searchParams.get('aviso'), now()), 'text/html; charset=utf-8');
    }
    if ((path === '/pagar' || path === '/decidir') && request.method === 'POST') {
      const form = new URLSearchParams(await readBody(request));
      const notice = handleForm(bank, path === '/pagar' ? 'pagar' : 'decidir', form);
      log(`page: ${notice}`);
      response.writeHead(303, { location: `/?aviso=${encodeURIComponent(notice)}` });
      response.end();
      return;
    }
    sendText(response, 404, 'No encontrado');
  }

  async function controlCall(request: IncomingMessage, response: ServerResponse, rest: string): Promise<void> {
    const parts = rest.split('/').filter((part) => part !== '').map(segment);
    if (parts.some((part) => part === null)) return sendJson(response, 400, { error: 'malformed path' });
    let body: unknown;
    const text = await readBody(request).catch((error: unknown) => (error instanceof BodyTooLarge ? null : Promise.reject(error)));
    if (text === null) return sendJson(response, 413, { error: 'body too large' });
    if (text.trim() !== '') {
      try {
        body = JSON.parse(text);
      } catch {
        return sendJson(response, 400, { error: 'the body is not valid JSON' });
      }
    }
    const answer = control(context, request.method ?? 'GET', parts as string[], body);
    sendJson(response, answer.status, answer.body);
  }

  async function bankCall(request: IncomingMessage, response: ServerResponse, rest: string, query: URLSearchParams): Promise<void> {
    // The encryption helpers the specification mentions; they answer the bare text.
    if (request.method === 'GET' && (rest === 'api/authentication/encrypt' || rest === 'api/authentication/decrypt')) {
      const text = query.get('text') ?? '';
      const key = query.get('aesKey') ?? '';
      if (!/^[\x21-\x7e]{32}$/.test(key)) return sendText(response, 400, 'aesKey debe tener 32 caracteres');
      if (rest.endsWith('encrypt')) return sendText(response, 200, encryptField(text, key));
      const plain = decryptField(text, key);
      return plain === null ? sendText(response, 400, 'El texto no pudo ser descifrado') : sendText(response, 200, plain);
    }

    const route = BANK_ROUTES.find((candidate) => candidate.pattern.test(rest));
    if (!route) return sendJson(response, 404, { responseCode: CODES.notFound, message: 'Recurso no encontrado' });
    if (request.method !== route.method) {
      return sendJson(response, 405, { responseCode: CODES.invalidRequest, message: `Método no permitido: use ${route.method}` }, { allow: route.method });
    }
    let text: string;
    try {
      text = await readBody(request);
    } catch (error) {
      if (error instanceof BodyTooLarge) return sendJson(response, 413, { responseCode: CODES.invalidRequest, message: 'El cuerpo de la solicitud es demasiado grande' });
      throw error;
    }

    const fault = takeFault(knobs, route.operation);
    if (fault && !fault.processed) {
      log(`${route.method} ${rest} → fault ${fault.kind}`);
      return applyFault(fault, request, response);
    }
    const answer = await answerOf(route, request, rest, text);
    log(`${route.method} ${rest} → HTTP ${answer.status} responseCode ${String(answer.body.responseCode)}${answer.body.message ? ` (${String(answer.body.message)})` : ''}`);
    const delay = knobs.delays[route.operation];
    if (delay) await sleep(delay, timers);
    if (fault) {
      log(`${route.method} ${rest} → processed, then fault ${fault.kind}`);
      return applyFault(fault, request, response);
    }
    if (!response.destroyed) sendJson(response, answer.status, answer.body, answer.status === 401 ? { 'www-authenticate': 'Bearer' } : {});
  }

  /** What the bank answers a call (status and JSON body); refusals included, never an exception. */
  async function answerOf(route: BankRoute, request: IncomingMessage, rest: string, text: string): Promise<{ status: number; body: Record<string, unknown> }> {
    const refusal = (error: Refusal) => ({ status: knobs.refusalHttpStatus, body: { responseCode: error.code, message: error.message } });
    if (route.auth && !bank.tokenIsLive(request.headers.authorization)) {
      return { status: 401, body: { responseCode: CODES.token, message: 'Token inválido o expirado' } };
    }
    let body: unknown;
    if (route.method !== 'GET') {
      const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (text.trim() !== '' && type !== 'application/json') {
        return { status: 415, body: { responseCode: CODES.invalidRequest, message: 'Content-Type debe ser application/json' } };
      }
      if (text.trim() !== '') {
        try {
          body = JSON.parse(text);
        } catch {
          return refusal(new Refusal(CODES.invalidRequest, 'El cuerpo de la solicitud no es JSON válido'));
        }
      }
    }
    const param = segment(route.pattern.exec(rest)?.[1] ?? '');
    if (param === null) return refusal(new Refusal(CODES.invalidRequest, 'Parámetro de ruta mal codificado'));
    try {
      const fields = await route.run(bank, { request, body, param }, knobs.statusKey);
      return { status: 200, body: { responseCode: 0, message: '', ...fields } };
    } catch (error) {
      if (error instanceof Refusal) return refusal(error);
      throw error;
    }
  }

  function applyFault(fault: Fault, request: IncomingMessage, response: ServerResponse): void {
    switch (fault.kind) {
      case 'refuse':
        return sendJson(response, knobs.refusalHttpStatus, { responseCode: fault.code, message: fault.message });
      case 'http500':
        return sendJson(response, 500, { responseCode: CODES.simulated, message: 'Error interno del servidor (simulado)' });
      case 'malformed':
        return sendText(response, 200, '{"responseCode":0,"message":"","qrId":"2106<html>Gateway', 'application/json; charset=utf-8');
      case 'close':
        request.socket.destroy();
        return;
      case 'stall':
        // No answer: the socket stays open until the client gives up (or stop() closes it).
        return;
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = options.host ?? '127.0.0.1';
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}/`;
  Object.assign(env, {
    RAIL: 'baneco',
    BANECO_URL: `${url}ApiGateway/`,
    BANECO_USER: credentials.userName,
    BANECO_PASSWORD: credentials.password,
    BANECO_AES_KEY: credentials.aesKey,
    BANECO_ACCOUNT: credentials.account,
    ...(credentials.callbackSecret ? { BANECO_CALLBACK_SECRET: credentials.callbackSecret } : {}),
  });

  let stopping: Promise<void> | undefined;
  return {
    url,
    baseUrl: `${url}ApiGateway/`,
    controlUrl: `${url}_control/`,
    port,
    credentials,
    callbackBase,
    env,
    knobs,
    setKnobs(update) {
      const problems = applyKnobs(knobs, update);
      if (problems.length > 0) throw new Error(`invalid knobs: ${problems.join('; ')}`);
    },
    pay: (qrId, payOptions = {}) => paymentQr(bank.pay(qrId, payOptions)),
    decide(batchId, batchDetailId, status, descriptionStatus) {
      const batch = bank.findBatch(batchId);
      const item = batch?.items.find((each) => each.batchDetailId === batchDetailId);
      if (!batch || !item) throw new Error(`no item ${batchDetailId} in batch ${batchId}`);
      bank.decide(batch, item, status, descriptionStatus);
    },
    expireTokens: () => bank.expireTokens(),
    state: () => snapshot(context),
    callbacks: () => [...callbacks.attempts],
    pendingCallbacks: () => callbacks.pending(),
    reset: context.reset,
    stop() {
      stopping ??= new Promise<void>((resolve) => {
        callbacks.stop();
        bank.stop();
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        server.close(() => resolve());
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
      });
      return stopping;
    },
  };
}
