// SSRF guard of live mode (docs/api-reference.md#webhook-destination-guard): a webhook URL must be https and must not reach loopback, private,
// link-local, CGNAT, metadata or otherwise reserved addresses. URLs are checked when saved (scheme and IP
// literals) and again at delivery, after DNS resolution, by a lookup function handed to the HTTP client:
// it resolves the name, refuses if any address is blocked, and returns the checked addresses, so the
// socket connects to exactly what was checked and a DNS rebinding between check and connect cannot
// slip through. Redirects are never followed (dispatcher.ts), so a 30x cannot point elsewhere.
import dns from 'node:dns';
import net from 'node:net';

interface BlockedRange {
  network: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
  reason: string;
}

// Metadata addresses first, so they are named as such (169.254.169.254 is also link-local).
const BLOCKED_RANGES: BlockedRange[] = [
  { network: '169.254.169.254', prefix: 32, family: 'ipv4', reason: 'cloud metadata' },
  { network: '100.100.100.200', prefix: 32, family: 'ipv4', reason: 'cloud metadata' },
  { network: 'fd00:ec2::254', prefix: 128, family: 'ipv6', reason: 'cloud metadata' },
  { network: '0.0.0.0', prefix: 8, family: 'ipv4', reason: 'unspecified' },
  { network: '10.0.0.0', prefix: 8, family: 'ipv4', reason: 'private' },
  { network: '100.64.0.0', prefix: 10, family: 'ipv4', reason: 'CGNAT' },
  { network: '127.0.0.0', prefix: 8, family: 'ipv4', reason: 'loopback' },
  { network: '169.254.0.0', prefix: 16, family: 'ipv4', reason: 'link-local' },
  { network: '172.16.0.0', prefix: 12, family: 'ipv4', reason: 'private' },
  { network: '192.0.0.0', prefix: 24, family: 'ipv4', reason: 'reserved' },
  { network: '192.0.2.0', prefix: 24, family: 'ipv4', reason: 'reserved' },
  { network: '192.168.0.0', prefix: 16, family: 'ipv4', reason: 'private' },
  { network: '198.18.0.0', prefix: 15, family: 'ipv4', reason: 'reserved' },
  { network: '198.51.100.0', prefix: 24, family: 'ipv4', reason: 'reserved' },
  { network: '203.0.113.0', prefix: 24, family: 'ipv4', reason: 'reserved' },
  { network: '224.0.0.0', prefix: 4, family: 'ipv4', reason: 'multicast' },
  { network: '240.0.0.0', prefix: 4, family: 'ipv4', reason: 'reserved' },
  { network: '::', prefix: 128, family: 'ipv6', reason: 'unspecified' },
  { network: '::1', prefix: 128, family: 'ipv6', reason: 'loopback' },
  { network: '64:ff9b::', prefix: 96, family: 'ipv6', reason: 'NAT64' },
  { network: '100::', prefix: 64, family: 'ipv6', reason: 'reserved' },
  { network: '2001:db8::', prefix: 32, family: 'ipv6', reason: 'reserved' },
  { network: 'fc00::', prefix: 7, family: 'ipv6', reason: 'private' },
  { network: 'fe80::', prefix: 10, family: 'ipv6', reason: 'link-local' },
  { network: 'ff00::', prefix: 8, family: 'ipv6', reason: 'multicast' },
];

const blockLists = BLOCKED_RANGES.map((range) => {
  const list = new net.BlockList();
  list.addSubnet(range.network, range.prefix, range.family);
  return { list, reason: range.reason };
});

/** Why an IP address may not receive webhooks in live mode, or null for a public address. IPv4-mapped IPv6 counts as its IPv4. */
export function blockedAddressReason(address: string): string | null {
  const family = net.isIP(address);
  if (family === 0) return 'not an IP address';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const { list, reason } of blockLists) if (list.check(address, type)) return reason;
  return null;
}

/** The host of a URL without IPv6 brackets. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/**
 * What live mode refuses of a URL before any DNS: a scheme other than https, or an IP literal in a blocked
 * range. Returns the reason, or null. (Names are checked after resolution, at delivery.)
 */
export function liveUrlProblem(url: URL): string | null {
  if (url.protocol !== 'https:') return 'must use https in live mode';
  const host = hostOf(url);
  if (net.isIP(host)) {
    const reason = blockedAddressReason(host);
    if (reason) return `must not point to a ${reason} address (${host})`;
  }
  return null;
}

export class SsrfRefusedError extends Error {
  readonly code = 'SSRF_REFUSED';
  constructor(message: string) {
    super(message);
    this.name = 'SsrfRefusedError';
  }
}

type LookupAddress = { address: string; family: number };
type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http(s).request that resolves every address of the name and refuses the connection when
 * any of them is blocked. The socket then connects to the address returned here, the one that was checked.
 */
export function guardedLookup(hostname: string, options: dns.LookupOptions, callback: LookupCallback): void {
  dns.lookup(hostname, { all: true, family: options.family ?? 0, hints: options.hints }, (error, addresses) => {
    if (error) return callback(error, '');
    for (const { address } of addresses) {
      const reason = blockedAddressReason(address);
      if (reason) return callback(new SsrfRefusedError(`refused: ${hostname} resolves to ${address}, a ${reason} address`), '');
    }
    if (addresses.length === 0) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '');
    if (options.all) return callback(null, addresses);
    return callback(null, addresses[0]!.address, addresses[0]!.family);
  });
}

/** The delivery-time check of an IP literal host (net.connect skips `lookup` for literals). */
export function refuseBlockedLiteral(url: URL): void {
  const problem = liveUrlProblem(url);
  if (problem) throw new SsrfRefusedError(`refused: URL ${problem}`);
}
