// `npm run bank`: runs the simulator on 127.0.0.1 and prints the environment that points the service at
// it. Settings (all optional):
//   BANK_PORT                 port to listen on (3900)
//   BANK_CALLBACK_BASE        the merchant's callback base
//                             (http://127.0.0.1:3000/rails/baneco/<a generated secret>/)
//   BANK_USER, BANK_PASSWORD, BANK_AES_KEY, BANK_ACCOUNT   fixed credentials instead of generated ones
//   BANK_KNOBS                JSON of knobs to start with, as POST /_control/knobs takes them
//   BANK_QUIET=1              no line per call
import { randomToken } from './crypto.ts';
import { startBanecoSimulator } from './server.ts';

function fail(message: string): never {
  process.stderr.write(`bank: ${message}\n`);
  process.exit(1);
}

const env = process.env;
const port = Number(env.BANK_PORT ?? '3900');
if (!Number.isInteger(port) || port < 0 || port > 65535) fail('BANK_PORT must be a port number');
// 43 URL-safe characters: the service wants at least 32.
const callbackBase = env.BANK_CALLBACK_BASE || `http://127.0.0.1:3000/rails/baneco/${randomToken(43)}/`;
let knobs: Record<string, unknown> | undefined;
try {
  knobs = env.BANK_KNOBS ? (JSON.parse(env.BANK_KNOBS) as Record<string, unknown>) : undefined;
} catch {
  fail('BANK_KNOBS is not valid JSON');
}

const quiet = env.BANK_QUIET === '1';
const simulator = await startBanecoSimulator({
  port,
  callbackBase,
  ...(env.BANK_USER ? { userName: env.BANK_USER } : {}),
  ...(env.BANK_PASSWORD ? { password: env.BANK_PASSWORD } : {}),
  ...(env.BANK_AES_KEY ? { aesKey: env.BANK_AES_KEY } : {}),
  ...(env.BANK_ACCOUNT ? { account: env.BANK_ACCOUNT } : {}),
  ...(knobs ? { knobs } : {}),
  log: quiet ? undefined : (line) => process.stdout.write(`${new Date().toISOString()} ${line}\n`),
}).catch((error: unknown) => fail((error as Error).message));

// The printed line is the bank's variables plus what a desk needs to see money move at once: its own
// in-memory database (sandbox keys printed at every start — the embedded ./data prints them on its first
// start only — and nothing mixed into a database the reader already uses, which this fresh bank would not
// know), a batch every 5 s rather than every minute (the bank decides items 2 s after the upload), and the
// service's PORT when the callbacks go to another local port than the service's default 3000.
const desk: Record<string, string> = { BANECO_BATCH_INTERVAL: '5s', DATABASE_URL: 'memory://' };
const callbackPort = localPortOf(callbackBase);
if (callbackPort !== null && callbackPort !== 3000) desk.PORT = String(callbackPort);
const line = Object.entries({ ...simulator.env, ...desk }).map(([name, value]) => `${name}=${value}`).join(' ');
process.stdout.write(
  `Banco Económico simulator (API Market v1.3.0) listening on ${simulator.url}\n` +
  `  page:        ${simulator.url}   (pay QRs as a payer, decide batch items)\n` +
  `  bank API:    ${simulator.baseUrl}\n` +
  `  control API: ${simulator.controlUrl}   (GET state, POST knobs, …)\n` +
  `  callbacks:   ${callbackBase}\n` +
  (simulator.credentials.callbackSecret ? '' : '  (the callback base has no /rails/baneco/<secret>/ segment: set BANECO_CALLBACK_SECRET yourself)\n') +
  `\nStart the service against it with:\n\n${line} npm start\n\n`,
);

/** The port of a callback base on this machine (127.0.0.1, localhost), or null: elsewhere, or not a URL. */
function localPortOf(base: string): number | null {
  try {
    const url = new URL(base);
    if (url.protocol !== 'http:' || !['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) return null;
    return url.port === '' ? 80 : Number(url.port);
  } catch {
    return null;
  }
}

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`bank: ${signal}, stopping\n`);
    simulator.stop().then(() => process.exit(0), () => process.exit(1));
  });
}
