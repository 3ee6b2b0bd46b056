// listen.trustedProxies: the reverse proxies whose X-Forwarded-For the
// listeners believe (src/http/client-address.ts). Each entry is an IPv4 or
// IPv6 address or a CIDR block; anything a proxy could not be (a host name, a
// block with host bits set, a block wider than any proxy fleet: shorter than
// /8 for IPv4 or /7 for IPv6, an IPv4-mapped block judged as the IPv4 block
// it holds) is refused with what to write instead, since a wrong entry either
// trusts clients to name themselves or trusts nobody. node's BlockList
// matches IPv4 clients against IPv4-mapped IPv6 rules, so "::ffff:0:0/96"
// (or "::/8", which holds it) would trust every IPv4 client.
import { isIP } from 'node:net';
import type { Checker } from './config-checker.ts';
import { ipv6Groups } from './ipv6-address.ts';

const MAX_ENTRIES = 64;
/** The widest blocks accepted: a /8 (10.0.0.0/8) and a /7 (fc00::/7, the unique local addresses). */
const MIN_IPV4_PREFIX = 8;
const MIN_IPV6_PREFIX = 7;
/** ::ffff:0:0/96, where IPv4 addresses sit in IPv6. */
const IPV4_MAPPED_PREFIX = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];
const EXAMPLES = '"10.0.0.0/8", "127.0.0.1" or "fd00::/8"';

export function parseTrustedProxies(c: Checker, value: unknown, at: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > MAX_ENTRIES) {
    return c.report(at, { code: 'not_array', message: `must be an array of at most ${MAX_ENTRIES} addresses or CIDR blocks, like ${EXAMPLES}` }) ?? [];
  }
  const entries: string[] = [];
  value.forEach((entry: unknown, i) => {
    const path = `${at}[${i}]`;
    if (typeof entry !== 'string' || entry.trim() === '') return c.report(path, { code: 'not_string' });
    const problem = trustedProxyProblem(entry.trim());
    if (problem !== null) return c.report(path, { code: 'invalid_value', message: problem });
    entries.push(entry.trim());
    return undefined;
  });
  return entries;
}

/** What is wrong with one entry, as the sentence the operator reads; null when it is usable. */
export function trustedProxyProblem(entry: string): string | null {
  const slash = entry.indexOf('/');
  const address = slash === -1 ? entry : entry.slice(0, slash);
  const version = isIP(address);
  if (version === 0 || address.includes('%')) {
    if (/^[A-Za-z0-9.-]+$/.test(address) && /[A-Za-z]/.test(address) && !address.includes(':')) {
      return `"${address}" is a host name; name each proxy by its IP address or CIDR block (${EXAMPLES}): a name is not what a connection comes from`;
    }
    return `"${entry}" is not an IP address or CIDR block; write one like ${EXAMPLES}`;
  }
  if (slash === -1) return null;
  const bitsText = entry.slice(slash + 1);
  const width = version === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(bitsText) || Number(bitsText) > width) {
    return `"${entry}": the prefix length after "/" must be a whole number from 1 to ${width} for an IPv${version} block`;
  }
  const bits = Number(bitsText);
  if (bits === 0) return `"${entry}" holds every IPv${version} address: any client could then name its own address in X-Forwarded-For; list the proxies' addresses only`;
  const bytes = version === 4 ? address.split('.').map(Number) : ipv6Bytes(address);
  const network = masked(bytes, bits);
  const tooWide = version === 4 ? ipv4WidthProblem(entry, bits) : ipv6WidthProblem(entry, network, bits);
  if (tooWide !== null) return tooWide;
  if (network.some((byte, i) => byte !== bytes[i])) {
    const text = version === 4 ? network.join('.') : ipv6Text(network);
    return `"${entry}" has bits set beyond its /${bits} prefix; the block is written "${text}/${bits}"`;
  }
  return null;
}

const TOO_WIDE = 'any client behind it could name its own address in X-Forwarded-For';

function ipv4WidthProblem(entry: string, bits: number): string | null {
  if (bits >= MIN_IPV4_PREFIX) return null;
  return `"${entry}" is wider than a /${MIN_IPV4_PREFIX} (${2 ** (32 - bits)} addresses): ${TOO_WIDE}; list the proxies' addresses or blocks of /${MIN_IPV4_PREFIX} or longer, like "10.0.0.0/8" or "192.168.0.0/16"`;
}

function ipv6WidthProblem(entry: string, network: number[], bits: number): string | null {
  if (bits < MIN_IPV6_PREFIX) {
    return `"${entry}" is wider than a /${MIN_IPV6_PREFIX}: ${TOO_WIDE}; list the proxies' addresses or blocks of /${MIN_IPV6_PREFIX} or longer, like "fd00::/8" or "2001:db8::/32"`;
  }
  if (bits <= 96) {
    const holdsMapped = masked([...IPV4_MAPPED_PREFIX, 0, 0, 0, 0], bits).every((byte, i) => byte === network[i]);
    if (!holdsMapped) return null;
    return `"${entry}" holds every IPv4-mapped IPv6 address (::ffff:0:0/96), so every IPv4 client: ${TOO_WIDE}; list the proxies' IPv4 addresses or blocks of /${MIN_IPV4_PREFIX} or longer, like "10.0.0.0/8"`;
  }
  const ipv4Bits = bits - 96;
  if (ipv4Bits >= MIN_IPV4_PREFIX || !IPV4_MAPPED_PREFIX.every((byte, i) => byte === network[i])) return null;
  return `"${entry}" is the IPv4 block ${network.slice(12).join('.')}/${ipv4Bits} mapped into IPv6, wider than a /${MIN_IPV4_PREFIX}: ${TOO_WIDE}; list the proxies' addresses or blocks of /${MIN_IPV4_PREFIX} or longer, like "10.0.0.0/8" (or "::ffff:10.0.0.0/104")`;
}

function masked(bytes: number[], bits: number): number[] {
  return bytes.map((byte, i) => {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    return byte & ((0xff << (8 - keep)) & 0xff);
  });
}

/** The 16 bytes of an IPv6 address that isIP accepted. */
function ipv6Bytes(address: string): number[] {
  return ipv6Groups(address).flatMap((n) => [n >> 8, n & 0xff]);
}

function ipv6Text(bytes: number[]): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16));
  // The longest run of zero groups (two or more) becomes "::".
  let best = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLength) {
      best = i;
      bestLength = j - i;
    }
    i = j === i ? i + 1 : j;
  }
  if (best === -1) return groups.join(':');
  return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLength).join(':')}`;
}
