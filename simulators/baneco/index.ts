// The Banco Económico "API Market" simulator: a strict, in-memory stand-in for the bank, for the
// service's tests and for running the live path on a desk. See README.md beside this file.
export { startBanecoSimulator } from './server.ts';
export type { BanecoCredentials, BanecoSimulator, BanecoSimulatorOptions } from './server.ts';
export type { CallbackAttempt } from './callbacks.ts';
export type { Knobs, Fault, Operation } from './knobs.ts';
export type { PayOptions } from './state.ts';
