// Which client a request comes from. Directly connected, it is the socket's
// peer. Behind a reverse proxy the peer is the proxy, shared by every client;
// a proxy named in listen.trustedProxies appends the address it received the
// request from to `X-Forwarded-For`, so the client is the rightmost address
// there that is not itself a trusted proxy. Entries to its left were written
// by the client or by proxies nobody vouches for and are never believed.
// (MDN, "X-Forwarded-For", Security and privacy concerns: "the rightmost IP
// address that is not a trusted proxy".)
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';

/** The peers whose X-Forwarded-For is believed (listen.trustedProxies). */
export interface TrustedProxies {
  /** No entries: every peer is the client itself. */
  readonly empty: boolean;
  /** `address` (IPv4, IPv6, or IPv4 mapped into IPv6) is a trusted proxy. */
  has(address: string): boolean;
}

/** A listener without trusted proxies. */
export const NO_TRUSTED_PROXIES: TrustedProxies = { empty: true, has: () => false };

/** The address of a socket that has none (closed before it was read). */
export const UNKNOWN_ADDRESS = 'unknown';

/** At most this many X-Forwarded-For entries are looked at, from the right. */
const MAX_FORWARDED_HOPS = 32;

/**
 * `entries`: addresses and CIDR blocks as listen.trustedProxies holds them,
 * already checked by the config parser ("10.0.0.0/8", "127.0.0.1", "fd00::/8").
 */
export function trustedProxies(entries: readonly string[]): TrustedProxies {
  if (entries.length === 0) return NO_TRUSTED_PROXIES;
  const list = new BlockList();
  for (const entry of entries) {
    const slash = entry.indexOf('/');
    const address = slash === -1 ? entry : entry.slice(0, slash);
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (slash === -1) list.addAddress(address, family);
    else list.addSubnet(address, Number(entry.slice(slash + 1)), family);
  }
  return {
    empty: false,
    has(address) {
      const version = isIP(address);
      // node's BlockList matches an IPv4 rule against its IPv4-mapped IPv6 form too.
      return version !== 0 && list.check(address, version === 6 ? 'ipv6' : 'ipv4');
    },
  };
}

/**
 * The client's address for a request: the peer's unless the peer is a trusted
 * proxy, then the rightmost X-Forwarded-For entry that is not a trusted proxy.
 * When every entry is trusted, or an entry is not an address (no trusted proxy
 * writes one), the last address vouched for is the answer: never a text the
 * client chose.
 */
export function clientAddress(req: IncomingMessage, trusted: TrustedProxies): string {
  const peer = req.socket.remoteAddress ?? UNKNOWN_ADDRESS;
  if (trusted.empty || !trusted.has(peer)) return peer;
  const header = req.headers['x-forwarded-for'];
  return forwardedClient(peer, Array.isArray(header) ? header.join(', ') : header, trusted);
}

/** The walk of clientAddress over a header value (several headers node has joined with ", "). */
export function forwardedClient(peer: string, header: string | undefined, trusted: TrustedProxies): string {
  if (header === undefined) return peer;
  let vouched = peer;
  let end = header.length;
  for (let hop = 0; hop < MAX_FORWARDED_HOPS && end > 0; hop++) {
    const comma = header.lastIndexOf(',', end - 1);
    const address = hostOf(header.slice(comma + 1, end).trim());
    if (address === null) return vouched;
    if (!trusted.has(address)) return address;
    vouched = address;
    end = comma;
  }
  return vouched;
}

/** An X-Forwarded-For entry as an address: "1.2.3.4", "1.2.3.4:5678", "::1", "[::1]:80"; null otherwise. */
function hostOf(entry: string): string | null {
  if (isIP(entry) !== 0) return entry;
  if (entry.startsWith('[')) {
    const close = entry.indexOf(']');
    const inside = close === -1 ? '' : entry.slice(1, close);
    return isIP(inside) === 6 && (close === entry.length - 1 || entry[close + 1] === ':') ? inside : null;
  }
  const colon = entry.indexOf(':');
  if (colon !== -1 && entry.indexOf(':', colon + 1) === -1) {
    const host = entry.slice(0, colon);
    return isIP(host) === 4 ? host : null;
  }
  return null;
}
