// The Banco Económico simulator (simulators/baneco/) as a process of its own, for bench/bank.ts: in the
// benchmark's process it would share one event loop with autocannon, and its PNG rendering (every
// generateQR draws one) would slow the load generator and be slowed by it. It sends no callbacks
// (callbackBase null: each is recorded as skipped). Prints one JSON line, {env, controlUrl}, once it
// listens; knobs change through its control API (POST /_control/knobs); SIGTERM stops it.
//   node --import tsx bench/bank-simulator.ts '<knobs JSON>'
import { startBanecoSimulator } from '../simulators/baneco/index.ts';

const knobs = JSON.parse(process.argv[2] ?? '{}') as Record<string, unknown>;
const simulator = await startBanecoSimulator({ port: 0, callbackBase: null, knobs });
process.stdout.write(`${JSON.stringify({ env: simulator.env, controlUrl: simulator.controlUrl })}\n`);
process.once('SIGTERM', () => {
  simulator.stop().then(() => process.exit(0), () => process.exit(1));
});
