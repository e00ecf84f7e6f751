// The SSRF guard of webhook destinations (docs/api-reference.md#webhook-destination-guard): in live mode a
// webhook URL must be https, and (live, or a sandbox with WEBHOOK_PRIVATE_TARGETS=deny) it must not reach
// loopback, private, link-local, CGNAT, metadata or otherwise reserved addresses, in any IPv6 spelling. URLs are checked when saved (scheme and IP
// literals) and again at delivery, after DNS resolution, by a lookup function handed to the HTTP client:
// it resolves the name, refuses if any address is blocked, and returns the checked addresses, so the
// socket connects to exactly what was checked and a DNS rebinding between check and connect cannot
// slip through. Redirects are never followed (dispatcher.ts), so a 30x cannot point elsewhere.
// Link-local and cloud metadata addresses (and the IPv6 forms that may hide them) are refused at delivery
// in every mode, a default sandbox included: no developer needs them, and they hand out cloud credentials.
import dns from 'node:dns';
import net from 'node:net';
import { mappedIpv4Of } from '../ip.ts';

interface BlockedRange {
  network: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
  reason: string;
}

// Metadata addresses first, so they are named as such (169.254.169.254 is also link-local).
const BLOCKED_IPV4: BlockedRange[] = [
  { network: '169.254.169.254', prefix: 32, family: 'ipv4', reason: 'cloud metadata' },
  { network: '100.100.100.200', prefix: 32, family: 'ipv4', reason: 'cloud metadata' }, // Alibaba Cloud
  { network: '192.0.0.192', prefix: 32, family: 'ipv4', reason: 'cloud metadata' }, // Oracle Cloud (also 169.254.169.254)
  { network: '0.0.0.0', prefix: 8, family: 'ipv4', reason: 'unspecified' },
  { network: '10.0.0.0', prefix: 8, family: 'ipv4', reason: 'private' },
  { network: '100.64.0.0', prefix: 10, family: 'ipv4', reason: 'CGNAT' },
  { network: '127.0.0.0', prefix: 8, family: 'ipv4', reason: 'loopback' },
  { network: '169.254.0.0', prefix: 16, family: 'ipv4', reason: 'link-local' },
  { network: '172.16.0.0', prefix: 12, family: 'ipv4', reason: 'private' },
  { network: '192.0.0.0', prefix: 24, family: 'ipv4', reason: 'reserved' },
  { network: '192.0.2.0', prefix: 24, family: 'ipv4', reason: 'reserved' },
  { network: '192.88.99.0', prefix: 24, family: 'ipv4', reason: '6to4 relay' },
  { network: '192.168.0.0', prefix: 16, family: 'ipv4', reason: 'private' },
  { network: '198.18.0.0', prefix: 15, family: 'ipv4', reason: 'reserved' },
  { network: '198.51.100.0', prefix: 24, family: 'ipv4', reason: 'reserved' },
  { network: '203.0.113.0', prefix: 24, family: 'ipv4', reason: 'reserved' },
  { network: '224.0.0.0', prefix: 4, family: 'ipv4', reason: 'multicast' },
  { network: '240.0.0.0', prefix: 4, family: 'ipv4', reason: 'reserved' },
];

// IPv6. The transition forms carry an IPv4 address inside, and a gateway or the host's own stack may
// deliver to it: IPv4-mapped (::ffff:0:0/96) is checked as its IPv4 address (resolvers return it for
// IPv4-only names), while the deprecated or translated forms — IPv4-compatible (::/96), SIIT
// (::ffff:0:0:0/96), NAT64 (64:ff9b::/96 and the local-use 64:ff9b:1::/48), 6to4 (2002::/16) and Teredo
// (2001::/32) — are refused whole: no legitimate webhook receiver needs them, and decoding each (Teredo
// hides its client address XORed) would be a place for a mistake.
const BLOCKED_IPV6: BlockedRange[] = [
  { network: 'fd00:ec2::254', prefix: 128, family: 'ipv6', reason: 'cloud metadata' }, // AWS
  { network: 'fd20:ce::254', prefix: 128, family: 'ipv6', reason: 'cloud metadata' }, // Google Cloud
  { network: '::', prefix: 128, family: 'ipv6', reason: 'unspecified' },
  { network: '::1', prefix: 128, family: 'ipv6', reason: 'loopback' },
  { network: '::', prefix: 96, family: 'ipv6', reason: 'IPv4-compatible' },
  { network: '::ffff:0:0:0', prefix: 96, family: 'ipv6', reason: 'SIIT' },
  { network: '64:ff9b::', prefix: 96, family: 'ipv6', reason: 'NAT64' },
  { network: '64:ff9b:1::', prefix: 48, family: 'ipv6', reason: 'NAT64' },
  { network: '100::', prefix: 64, family: 'ipv6', reason: 'reserved' },
  { network: '2001::', prefix: 32, family: 'ipv6', reason: 'Teredo' },
  { network: '2001:2::', prefix: 48, family: 'ipv6', reason: 'reserved' },
  { network: '2001:20::', prefix: 28, family: 'ipv6', reason: 'reserved' },
  { network: '2001:db8::', prefix: 32, family: 'ipv6', reason: 'reserved' },
  { network: '3fff::', prefix: 20, family: 'ipv6', reason: 'reserved' },
  { network: '5f00::', prefix: 16, family: 'ipv6', reason: 'reserved' },
  { network: '2002::', prefix: 16, family: 'ipv6', reason: '6to4' },
  { network: 'fc00::', prefix: 7, family: 'ipv6', reason: 'unique-local' },
  { network: 'fe80::', prefix: 10, family: 'ipv6', reason: 'link-local' },
  { network: 'fec0::', prefix: 10, family: 'ipv6', reason: 'site-local' },
  { network: 'ff00::', prefix: 8, family: 'ipv6', reason: 'multicast' },
];

const toBlockLists = (ranges: BlockedRange[]) => ranges.map((range) => {
  const list = new net.BlockList();
  list.addSubnet(range.network, range.prefix, range.family);
  return { list, reason: range.reason };
});
const ipv4Lists = toBlockLists(BLOCKED_IPV4);
const ipv6Lists = toBlockLists(BLOCKED_IPV6);

/**
 * Why an IP address may not receive webhooks when the guard is on, or null for a public address. An
 * IPv4-mapped IPv6 address counts as its IPv4 address; the other transition forms are refused whole.
 */
export function blockedAddressReason(address: string): string | null {
  const family = net.isIP(address);
  if (family === 0) return 'not an IP address';
  if (family === 4) return firstMatch(ipv4Lists, address, 'ipv4');
  const mapped = mappedIpv4Of(address);
  if (mapped !== null) return firstMatch(ipv4Lists, mapped, 'ipv4');
  return firstMatch(ipv6Lists, address, 'ipv6');
}

/**
 * Reasons refused whatever WEBHOOK_PRIVATE_TARGETS says: metadata and link-local addresses, and the IPv6
 * transition forms, which are refused whole because they may carry one of those inside (ssrf.ts does not
 * decode them). Loopback and private addresses stay reachable from a default sandbox, for developers.
 */
const ALWAYS_REFUSED = new Set(['cloud metadata', 'link-local', 'IPv4-compatible', 'SIIT', 'NAT64', '6to4', 'Teredo']);

/** Why the policy refuses this address at delivery, or null: every blocked range when guarded, else the always-refused ones. */
export function refusedAddressReason(address: string, policy: DestinationPolicy): string | null {
  const reason = blockedAddressReason(address);
  return reason !== null && (policy.guardAddresses || ALWAYS_REFUSED.has(reason)) ? reason : null;
}

function firstMatch(lists: Array<{ list: net.BlockList; reason: string }>, address: string, type: 'ipv4' | 'ipv6'): string | null {
  for (const { list, reason } of lists) if (list.check(address, type)) return reason;
  return null;
}

/** The host of a URL without IPv6 brackets. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/**
 * Where webhooks may go. Live mode requires https and guards addresses; a sandbox guards addresses too when
 * WEBHOOK_PRIVATE_TARGETS=deny (a sandbox open to outside integrators), and by default lets developers
 * point endpoints at localhost.
 */
export interface DestinationPolicy {
  requireHttps: boolean;
  guardAddresses: boolean;
}

export function destinationPolicyOf(config: { mode: 'sandbox' | 'live'; webhookPrivateTargets: 'allow' | 'deny' }): DestinationPolicy {
  return { requireHttps: config.mode === 'live', guardAddresses: config.mode === 'live' || config.webhookPrivateTargets === 'deny' };
}

/**
 * What the policy refuses of a URL before any DNS: a scheme other than https, or an IP literal in a blocked
 * range. Returns the reason (shown to the endpoint's owner, who typed the URL), or null. Names are checked
 * after resolution, at delivery.
 */
export function destinationUrlProblem(url: URL, policy: DestinationPolicy): string | null {
  if (policy.requireHttps && url.protocol !== 'https:') return 'must use https in live mode';
  const host = hostOf(url);
  if (policy.guardAddresses && net.isIP(host)) {
    const reason = blockedAddressReason(host);
    if (reason) return `must not point to a ${reason} address`;
  }
  return null;
}

/**
 * What an attempt records for a refused destination, and (when addresses are guarded) for a name that does
 * not resolve or a connection that fails: the same words, so an endpoint's owner cannot tell an internal
 * name that exists (refused) from one that does not (DNS failure) — no map of the network.
 */
export const DESTINATION_UNREACHABLE = 'destination not allowed'; // the contract's words (§7), for every such failure

/** A delivery the guard stopped; its message is all the attempt records (DESTINATION_UNREACHABLE). */
export class SsrfRefusedError extends Error {
  readonly code = 'SSRF_REFUSED';
  constructor() {
    super(DESTINATION_UNREACHABLE);
    this.name = 'SsrfRefusedError';
  }
}

type LookupAddress = { address: string; family: number };
type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http(s).request that resolves every address of the name and refuses the connection when
 * the policy refuses any of them. The socket then connects to the address returned here, the one that was checked.
 */
export function guardedLookup(policy: DestinationPolicy) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => lookupChecked(policy, hostname, options, callback);
}

function lookupChecked(policy: DestinationPolicy, hostname: string, options: dns.LookupOptions, callback: LookupCallback): void {
  dns.lookup(hostname, { all: true, family: options.family ?? 0, hints: options.hints }, (error, addresses) => {
    if (error) return callback(error, '');
    if (addresses.some(({ address }) => refusedAddressReason(address, policy) !== null)) return callback(new SsrfRefusedError(), '');
    if (addresses.length === 0) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '');
    if (options.all) return callback(null, addresses);
    return callback(null, addresses[0]!.address, addresses[0]!.family);
  });
}

/** The delivery-time check of the scheme and of an IP literal host (net.connect skips `lookup` for literals). */
export function refuseAtDelivery(url: URL, policy: DestinationPolicy): void {
  const host = hostOf(url);
  if (destinationUrlProblem(url, policy) || (net.isIP(host) && refusedAddressReason(host, policy))) throw new SsrfRefusedError();
}
