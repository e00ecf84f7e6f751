// Waits for a service the benchmark started to be ready. The service listens at once and answers 503
// until its database is migrated (src/startup.ts), so /healthz is not enough: /readyz says when.
const READY_TIMEOUT_MS = 60_000;

export async function waitUntilReady(baseUrl: string): Promise<void> {
  const deadline = performance.now() + READY_TIMEOUT_MS;
  while (performance.now() < deadline) {
    try {
      if ((await fetch(`${baseUrl}/readyz`)).ok) return;
    } catch { /* not listening yet */ }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${baseUrl} was not ready within ${READY_TIMEOUT_MS / 1000} s`);
}
