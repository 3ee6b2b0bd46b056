// Which client addresses count as one client. An IPv4 address is one client
// (an IPv4-mapped IPv6 address is its IPv4 address). An IPv6 client counts by
// its /56: providers commonly delegate a /56 (or a /48) to one customer
// (RIPE-690), so one holder can rotate through 256 /64s of its own; counting
// by /64 would give it 256 budgets, counting by /56 gives it one. The connection
// share (./connection-limit.ts) and the admin throttles (src/admin/) key by
// the same group, so rotating addresses gains nothing at either.
import { isIP } from 'node:net';
import { ipv6Groups } from '../config/ipv6-address.ts';

/** The prefix length an IPv6 client is counted by. */
export const IPV6_GROUP_BITS = 56;

/**
 * The group `address` counts in: an IPv4 address itself ("::ffff:1.2.3.4" as
 * "1.2.3.4"), an IPv6 address as its /56 ("2001:db8:1:2ff::9" as
 * "2001:db8:1:200::/56"). Anything that is not an address ("unknown") is
 * returned as it is.
 */
export function addressGroup(address: string): string {
  // A zone ("fe80::1%eth0") names the interface, not the host.
  const percent = address.indexOf('%');
  const bare = percent === -1 ? address : address.slice(0, percent);
  const version = isIP(bare);
  if (version === 4) return bare;
  if (version !== 6) return address;
  const groups = ipv6Groups(bare);
  // ::ffff:0:0/96 holds IPv4 clients reached over an IPv6 socket.
  if (groups[0] === 0 && groups[1] === 0 && groups[2] === 0 && groups[3] === 0 && groups[4] === 0 && groups[5] === 0xffff) {
    const high = groups[6] ?? 0;
    const low = groups[7] ?? 0;
    return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
  }
  const kept = groups.slice(0, 4);
  kept[3] = (kept[3] ?? 0) & 0xff00;
  return `${kept.map((g) => g.toString(16)).join(':')}::/${IPV6_GROUP_BITS}`;
}
