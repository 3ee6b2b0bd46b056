// The NO_PROXY list, read as curl reads it (lib/noproxy.c, Curl_check_noproxy,
// curl 8.x; https://curl.se/libcurl/c/CURLOPT_NOPROXY.html):
//   - entries are separated by commas; blanks around an entry are ignored;
//   - "*" matches every host;
//   - a name matches itself and every name below it ("example.com" matches
//     "example.com" and "api.example.com", never "notexample.com"); a leading
//     dot changes nothing (".example.com" is "example.com"); one trailing dot
//     on the entry or the host is ignored; the comparison ignores case;
//   - an IPv4 or IPv6 address (the URL's [::1] without brackets) matches only
//     an address entry: the same address, or a CIDR range ("10.0.0.0/8",
//     "fd00::/8", since curl 7.86); a name never matches an address, and no
//     DNS lookup is made.
// Where we knowingly differ, each only ever makes an entry match what its
// writer plainly meant, and docs/config.md lists them:
//   - blanks also separate entries (curl up to 8.8 did too; from 8.9 it stops
//     reading at the first blank-separated entry);
//   - "*" counts as match-all anywhere in the list, not only as the whole value;
//   - "*.example.com" is read as ".example.com";
//   - an IPv6 entry may be written in brackets ("[::1]");
//   - a CIDR range is plain CIDR: "0.0.0.0/0" matches every IPv4 address
//     (curl treats "/0" as an exact address).
// An entry that can never match (one with a port: curl compares hosts only;
// a malformed range) is kept as a note for the start log, never dropped silently.

import { BlockList, isIP } from 'node:net';
import { domainToASCII } from 'node:url';

export interface NoProxyList {
  /** "*" was listed: no host goes through the proxy. */
  readonly all: boolean;
  /** Domain entries, lower case, without leading or trailing dots. */
  readonly names: readonly string[];
  /** Address and CIDR entries. */
  readonly addresses: BlockList;
  /** Entries that can never match, each with the reason, for the start log. */
  readonly ignored: readonly { entry: string; reason: string }[];
}

/** Longest NO_PROXY value read; a longer one is a mistake, not a host list. */
export const MAX_NO_PROXY_CHARS = 65_536;

const SEPARATORS = /[\s,]+/;
const WITH_PORT = /^(?:\[[^\]]*\]|[^:[\]]+):\d+$/;

export function parseNoProxy(value: string): NoProxyList {
  const names: string[] = [];
  const addresses = new BlockList();
  const ignored: { entry: string; reason: string }[] = [];
  let all = false;
  if (value.length > MAX_NO_PROXY_CHARS) {
    ignored.push({ entry: `${value.slice(MAX_NO_PROXY_CHARS, MAX_NO_PROXY_CHARS + 20)}...`, reason: `everything after the first ${MAX_NO_PROXY_CHARS} characters is not read` });
  }
  for (const entry of value.slice(0, MAX_NO_PROXY_CHARS).split(SEPARATORS)) {
    if (entry === '') continue;
    if (entry === '*') {
      all = true;
      continue;
    }
    const reason = addEntry(entry, names, addresses);
    if (reason !== undefined) ignored.push({ entry, reason });
  }
  return { all, names, addresses, ignored };
}

/** Adds one entry; returns why it can never match, or undefined. */
function addEntry(entry: string, names: string[], addresses: BlockList): string | undefined {
  const slash = entry.indexOf('/');
  if (slash !== -1) return addRange(unbracket(entry.slice(0, slash)), entry.slice(slash + 1), addresses);
  const address = unbracket(entry);
  const family = isIP(address);
  if (family !== 0) {
    addresses.addAddress(address, family === 4 ? 'ipv4' : 'ipv6');
    return undefined;
  }
  if (WITH_PORT.test(entry)) return 'it has a port, and curl compares host names and addresses only; write it without ":port"';
  let name = entry.toLowerCase();
  if (name.startsWith('*.')) name = name.slice(1);
  if (name.startsWith('.')) name = name.slice(1);
  if (name.endsWith('.')) name = name.slice(0, -1);
  if (name === '' || name.includes('*')) return 'it is not a host name, an address or a CIDR range ("*" is allowed only alone or as "*.domain")';
  names.push(domainToASCII(name) || name);
  return undefined;
}

function addRange(network: string, bits: string, addresses: BlockList): string | undefined {
  const family = isIP(network);
  const prefix = /^\d{1,3}$/.test(bits) ? Number(bits) : -1;
  if (family === 0 || prefix < 0 || prefix > (family === 4 ? 32 : 128)) {
    return 'it is not a valid CIDR range (an IPv4 address with /0 to /32, or an IPv6 address with /0 to /128)';
  }
  addresses.addSubnet(network, prefix, family === 4 ? 'ipv4' : 'ipv6');
  return undefined;
}

function unbracket(text: string): string {
  return text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
}

/**
 * The entry of `list` that exempts `hostname` (a URL's `hostname`: lower-case
 * name, IPv4 address, or [IPv6] in brackets), or undefined. The entry is
 * returned for the log ("NO_PROXY matches .internal").
 */
export function noProxyMatch(list: NoProxyList, hostname: string): string | undefined {
  if (list.all) return '*';
  const address = unbracket(hostname);
  const family = isIP(address);
  if (family !== 0) return list.addresses.check(address, family === 4 ? 'ipv4' : 'ipv6') ? address : undefined;
  const host = (hostname.endsWith('.') ? hostname.slice(0, -1) : hostname).toLowerCase();
  return list.names.find((name) => host === name || (host.length > name.length && host.endsWith(name) && host.charCodeAt(host.length - name.length - 1) === DOT));
}

const DOT = 0x2e;
