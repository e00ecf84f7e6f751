// IP address arithmetic shared by the SSRF guard and the per-address rate limit: the groups of an IPv6
// address, the IPv4 address inside an IPv4-mapped one, and the network a client is counted by.
import net from 'node:net';

/** The IPv4 address inside an IPv4-mapped IPv6 address (::ffff:a.b.c.d, in any spelling), or null. */
export function mappedIpv4Of(address: string): string | null {
  const groups = ipv6Groups(address);
  if (!groups || groups.slice(0, 5).some((g) => g !== 0) || groups[5] !== 0xffff) return null;
  return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
}

/** The eight 16-bit groups of an IPv6 address (with `::` and a trailing dotted IPv4 expanded), or null. */
export function ipv6Groups(address: string): number[] | null {
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const missing = 8 - left.length - right.length;
  if (tail === undefined ? missing !== 0 : missing < 0) return null;
  const groups = [...left, ...Array<number>(missing).fill(0), ...right];
  return groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

/**
 * What a client address is counted by: an IPv4 address itself (IPv4-mapped ones as their IPv4), an IPv6
 * client by its /64 — one subscriber's usual share, which it could otherwise walk through to get a fresh
 * bucket with every address.
 */
export function clientNetworkOf(address: string): string {
  if (net.isIP(address) !== 6) return address;
  const mapped = mappedIpv4Of(address);
  if (mapped !== null) return mapped;
  const groups = ipv6Groups(address);
  return groups ? `${groups.slice(0, 4).map((g) => g.toString(16)).join(':')}::/64` : address;
}

/**
 * Whether `host` (a HOST value or a URL's host name) names this machine only: `localhost`, 127.0.0.0/8 or
 * ::1, in any spelling (an IPv4-mapped ::ffff:127.x too). A name other than localhost is not resolved: it
 * may name any address, so it counts as beyond loopback.
 */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (bare === 'localhost' || bare.endsWith('.localhost')) return true;
  const ipv4 = net.isIP(bare) === 4 ? bare : net.isIP(bare) === 6 ? mappedIpv4Of(bare) : null;
  if (ipv4 !== null) return ipv4.startsWith('127.');
  const groups = net.isIP(bare) === 6 ? ipv6Groups(bare) : null;
  return groups !== null && groups.slice(0, 7).every((g) => g === 0) && groups[7] === 1;
}
