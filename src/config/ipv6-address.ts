// The groups of an IPv6 address, for the code that compares addresses by
// prefix: the trusted proxy blocks (./trusted-proxies-config.ts) and the
// per-address connection share and throttles (src/http/address-group.ts).

/** The eight 16-bit groups of an IPv6 address `isIP` accepted ("::" and an IPv4 tail included). */
export function ipv6Groups(address: string): number[] {
  let text = address;
  const lastColon = text.lastIndexOf(':');
  if (text.indexOf('.', lastColon) !== -1) {
    const [a = 0, b = 0, c = 0, d = 0] = text.slice(lastColon + 1).split('.').map(Number);
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const gap = text.indexOf('::');
  const head = gap === -1 ? text.split(':') : text.slice(0, gap).split(':').filter((g) => g !== '');
  const tail = gap === -1 ? [] : text.slice(gap + 2).split(':').filter((g) => g !== '');
  const groups = [...head, ...Array<string>(Math.max(0, 8 - head.length - tail.length)).fill('0'), ...tail];
  return groups.map((g) => parseInt(g, 16));
}
