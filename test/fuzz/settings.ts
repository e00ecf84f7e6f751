// How long the fuzz tests run. By default a few cases per route with a fixed seed, so `npm test` stays fast
// and a failure found by one run is found again by the next. A longer run is opt-in:
//
//   FUZZ_RUNS=5000 npx vitest run test/fuzz        cases per property (default: a handful, see below)
//   FUZZ_SEED=12345 npx vitest run test/fuzz       another seed (default: the fixed one below)
//
// fast-check prints `seed` and `path` with every counterexample: rerun with that FUZZ_SEED to replay it.

/** The seed of the default run. */
const DEFAULT_SEED = 20_261_122;

function positiveIntegerFromEnv(name: string): number | undefined {
  const text = process.env[name];
  if (text === undefined || text === '') return undefined;
  if (!/^[0-9]+$/.test(text) || Number(text) < 1) throw new Error(`${name} must be a positive integer, not "${text}"`);
  return Number(text);
}

const runsFromEnv = positiveIntegerFromEnv('FUZZ_RUNS');

export const fuzzSettings = {
  seed: positiveIntegerFromEnv('FUZZ_SEED') ?? DEFAULT_SEED,
  /** Cases per property: `defaultRuns` unless FUZZ_RUNS says otherwise. */
  runs: (defaultRuns: number) => runsFromEnv ?? defaultRuns,
  /** A vitest timeout that grows with the number of cases (`perCaseMs` each, at least a minute). */
  timeoutFor: (runs: number, perCaseMs: number) => Math.max(60_000, runs * perCaseMs * 3),
};
