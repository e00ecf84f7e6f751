// What the start banner asks the operator to look at before money moves (docs/going-live.md#what-the-start-checks):
// settings that run, but that a live service should not run with. What would lose money is refused
// outright by loadConfig (config.ts liveRefusals) and never gets here; this is the rest, named by
// variable so the operator can grep their configuration for it.
import type { Config } from './config.ts';
import { isLoopbackHost } from './ip.ts';
import { DEFAULT_BANKS_ARE_ASFI_CODES } from './transfers/banks.ts';

export interface StartWarning {
  /** The variable to set or change. */
  variable: string;
  /** What goes wrong while it stays as it is, and what to do. */
  text: string;
}

/** The warnings of a start with `config`, in the order the banner prints them; none for a plain sandbox. */
export function startWarnings(config: Config): StartWarning[] {
  const warnings: StartWarning[] = [];
  // The shipped list's codes are this service's own; the bank reads bank_code as an ASFI code (docs/rails.md#bank-codes).
  if (config.rail.kind === 'baneco' && config.banks === null && !DEFAULT_BANKS_ARE_ASFI_CODES) {
    warnings.push({
      variable: 'BANKS_FILE',
      text: 'BANKS_FILE is unset: the shipped banks list holds this service\'s own codes, not the ASFI codes the bank reads; '
        + 'transfers would name the wrong banks. Set it to the codes the bank confirms.',
    });
  }
  if (config.mode !== 'live') return warnings;

  const servesApi = config.role !== 'worker';
  const listensBeyondLoopback = !isLoopbackHost(config.host);
  if (servesApi && !new URL(config.publicBaseUrl).protocol.startsWith('https')) {
    warnings.push({
      variable: 'PUBLIC_BASE_URL',
      text: `PUBLIC_BASE_URL is ${config.publicBaseUrl}: no payer can open a pay link there and the bank cannot call back; `
        + 'a trial on this machine only. Set it to the public https:// name.',
    });
  }
  if (servesApi && config.adminToken !== null && listensBeyondLoopback) {
    warnings.push({
      variable: 'ADMIN_TOKEN',
      text: `ADMIN_TOKEN is set and HOST=${config.host} listens beyond this machine: /admin/v1 creates merchants and keys and `
        + 'resolves money for anyone who reaches the port with the token. Unset it on instances that face the internet and run '
        + 'operator tasks with mps or from an instance inside your network.',
    });
  }
  if (config.database.kind !== 'postgres') {
    warnings.push({
      variable: 'DATABASE_URL',
      text: 'DATABASE_URL is unset: the embedded database runs one process, has no replica and is backed up only while the '
        + 'service is stopped. Use PostgreSQL with point-in-time recovery.',
    });
  }
  if (config.metricsToken === null) {
    warnings.push({ variable: 'METRICS_TOKEN', text: 'METRICS_TOKEN is unset: /metrics answers anyone who reaches the port.' });
  }
  if (servesApi && listensBeyondLoopback && config.trustProxy.length === 0) {
    warnings.push({
      variable: 'TRUST_PROXY',
      text: 'TRUST_PROXY is unset: behind the TLS proxy every client arrives as the proxy, so rate limits and logs see one '
        + 'address for everyone. Set it to the proxy\'s addresses.',
    });
  }
  return warnings;
}
