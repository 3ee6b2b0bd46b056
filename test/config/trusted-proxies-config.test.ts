// listen.trustedProxies and limits.maxConnectionsPerAddress in the config
// file: what is accepted, and the exact sentence for each entry refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from '../../src/config/config.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { trustedProxies } from '../../src/http/client-address.ts';

const minimal = {
  providers: { local: { type: 'openai', baseUrl: 'http://127.0.0.1:8000/v1/', apiKeyEnv: 'LOCAL_KEY' } },
  aliases: { 'service-chat': { provider: 'local', model: 'llama-3.1-8b' } },
};

function issues(value: unknown): Array<{ path: string; message: string }> {
  try {
    parseConfig(value, 'f.json', '/tmp');
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.issues.map(({ path, message }) => ({ path, message }));
  }
  return [];
}

test('listen.trustedProxies: addresses and blocks of both families are kept as written (trimmed)', () => {
  const entries = ['10.0.0.0/8', ' 127.0.0.1 ', '::1', 'fd00::/8', 'fc00::/7', '2001:db8::/32', '::ffff:10.0.0.0/104', '::ffff:0:0/104', '192.168.1.128/25', '10.1.2.3/32'];
  const c = parseConfig({ ...minimal, listen: { trustedProxies: entries } }, 'f.json', '/tmp');
  assert.deepEqual(c.listen.trustedProxies, entries.map((e) => e.trim()));
  assert.deepEqual(parseConfig(minimal, 'f.json', '/tmp').listen.trustedProxies, []);
});

const TOO_WIDE = 'any client behind it could name its own address in X-Forwarded-For';
const IPV4_ADVICE = 'list the proxies\' addresses or blocks of /8 or longer, like "10.0.0.0/8" or "192.168.0.0/16"';
const IPV4_MAPPED_ADVICE = 'list the proxies\' addresses or blocks of /8 or longer, like "10.0.0.0/8" (or "::ffff:10.0.0.0/104")';
const IPV6_ADVICE = 'list the proxies\' addresses or blocks of /7 or longer, like "fd00::/8" or "2001:db8::/32"';

test('listen.trustedProxies: each refused entry named by its index, with what to write instead', () => {
  const at = 'listen.trustedProxies';
  const cases: Array<[unknown, string, string]> = [
    ['10.0.0.0/8', at, 'must be an array of at most 64 addresses or CIDR blocks, like "10.0.0.0/8", "127.0.0.1" or "fd00::/8"'],
    [Array(65).fill('10.0.0.1'), at, 'must be an array of at most 64 addresses or CIDR blocks, like "10.0.0.0/8", "127.0.0.1" or "fd00::/8"'],
    [[7], `${at}[0]`, 'must be a non-empty string'],
    [['10.0.0.1', ''], `${at}[1]`, 'must be a non-empty string'],
    [['proxy.internal'], `${at}[0]`, '"proxy.internal" is a host name; name each proxy by its IP address or CIDR block ("10.0.0.0/8", "127.0.0.1" or "fd00::/8"): a name is not what a connection comes from'],
    [['10.0.0.256'], `${at}[0]`, '"10.0.0.256" is not an IP address or CIDR block; write one like "10.0.0.0/8", "127.0.0.1" or "fd00::/8"'],
    [['10.0.0/8'], `${at}[0]`, '"10.0.0/8" is not an IP address or CIDR block; write one like "10.0.0.0/8", "127.0.0.1" or "fd00::/8"'],
    [['fe80::1%eth0'], `${at}[0]`, '"fe80::1%eth0" is not an IP address or CIDR block; write one like "10.0.0.0/8", "127.0.0.1" or "fd00::/8"'],
    [['10.0.0.0/33'], `${at}[0]`, '"10.0.0.0/33": the prefix length after "/" must be a whole number from 1 to 32 for an IPv4 block'],
    [['fd00::/129'], `${at}[0]`, '"fd00::/129": the prefix length after "/" must be a whole number from 1 to 128 for an IPv6 block'],
    [['10.0.0.0/x'], `${at}[0]`, '"10.0.0.0/x": the prefix length after "/" must be a whole number from 1 to 32 for an IPv4 block'],
    [['0.0.0.0/0'], `${at}[0]`, '"0.0.0.0/0" holds every IPv4 address: any client could then name its own address in X-Forwarded-For; list the proxies\' addresses only'],
    [['::/0'], `${at}[0]`, '"::/0" holds every IPv6 address: any client could then name its own address in X-Forwarded-For; list the proxies\' addresses only'],
    [['10.1.2.3/8'], `${at}[0]`, '"10.1.2.3/8" has bits set beyond its /8 prefix; the block is written "10.0.0.0/8"'],
    [['192.168.1.200/25'], `${at}[0]`, '"192.168.1.200/25" has bits set beyond its /25 prefix; the block is written "192.168.1.128/25"'],
    [['fd12:3456::1/16'], `${at}[0]`, '"fd12:3456::1/16" has bits set beyond its /16 prefix; the block is written "fd12::/16"'],
    [['2001:db8:0:1::/48'], `${at}[0]`, '"2001:db8:0:1::/48" has bits set beyond its /48 prefix; the block is written "2001:db8::/48"'],
    [['10.0.0.1', '10.0.0.0/7'], `${at}[1]`, `"10.0.0.0/7" is wider than a /8 (33554432 addresses): ${TOO_WIDE}; ${IPV4_ADVICE}`],
    [['0.0.0.0/1'], `${at}[0]`, `"0.0.0.0/1" is wider than a /8 (2147483648 addresses): ${TOO_WIDE}; ${IPV4_ADVICE}`],
    [['::/1'], `${at}[0]`, `"::/1" is wider than a /7: ${TOO_WIDE}; ${IPV6_ADVICE}`],
    [['fc00::/6'], `${at}[0]`, `"fc00::/6" is wider than a /7: ${TOO_WIDE}; ${IPV6_ADVICE}`],
    [['::ffff:0:0/96'], `${at}[0]`, `"::ffff:0:0/96" holds every IPv4-mapped IPv6 address (::ffff:0:0/96), so every IPv4 client: ${TOO_WIDE}; list the proxies' IPv4 addresses or blocks of /8 or longer, like "10.0.0.0/8"`],
    [['::/8'], `${at}[0]`, `"::/8" holds every IPv4-mapped IPv6 address (::ffff:0:0/96), so every IPv4 client: ${TOO_WIDE}; list the proxies' IPv4 addresses or blocks of /8 or longer, like "10.0.0.0/8"`],
    [['::ffff:128.0.0.0/97'], `${at}[0]`, `"::ffff:128.0.0.0/97" is the IPv4 block 128.0.0.0/1 mapped into IPv6, wider than a /8: ${TOO_WIDE}; ${IPV4_MAPPED_ADVICE}`],
    [['::ffff:10.0.0.0/103'], `${at}[0]`, `"::ffff:10.0.0.0/103" is the IPv4 block 10.0.0.0/7 mapped into IPv6, wider than a /8: ${TOO_WIDE}; ${IPV4_MAPPED_ADVICE}`],
  ];
  for (const [value, path, message] of cases) {
    assert.deepEqual(issues({ ...minimal, listen: { trustedProxies: value } }), [{ path, message }], JSON.stringify(value));
  }
});

test('limits.maxConnectionsPerAddress: 1 to 1000000, unset by default, never above limits.maxConnections', () => {
  assert.equal(parseConfig(minimal, 'f.json', '/tmp').limits.maxConnectionsPerAddress, null);
  assert.equal(parseConfig({ ...minimal, limits: { maxConnectionsPerAddress: 40 } }, 'f.json', '/tmp').limits.maxConnectionsPerAddress, 40);
  assert.equal(parseConfig({ ...minimal, limits: { maxConnections: 50, maxConnectionsPerAddress: 50 } }, 'f.json', '/tmp').limits.maxConnectionsPerAddress, 50);
  assert.deepEqual(issues({ ...minimal, limits: { maxConnectionsPerAddress: 0 } }), [
    { path: 'limits.maxConnectionsPerAddress', message: 'must be an integer from 1 to 1000000' },
  ]);
  assert.deepEqual(issues({ ...minimal, limits: { maxConnections: 50, maxConnectionsPerAddress: 51 } }), [
    { path: 'limits.maxConnectionsPerAddress', message: 'must not exceed limits.maxConnections (50)' },
  ]);
});

test('listen.trustedProxies: blocks that would trust every IPv4 client together are each refused; the widest accepted trust no stranger', () => {
  const at = 'listen.trustedProxies';
  assert.deepEqual(issues({ ...minimal, listen: { trustedProxies: ['0.0.0.0/1', '128.0.0.0/1'] } }), [
    { path: `${at}[0]`, message: `"0.0.0.0/1" is wider than a /8 (2147483648 addresses): ${TOO_WIDE}; ${IPV4_ADVICE}` },
    { path: `${at}[1]`, message: `"128.0.0.0/1" is wider than a /8 (2147483648 addresses): ${TOO_WIDE}; ${IPV4_ADVICE}` },
  ]);
  const widest = trustedProxies(parseConfig({ ...minimal, listen: { trustedProxies: ['10.0.0.0/8', 'fc00::/7', '::ffff:10.0.0.0/104', '::1'] } }, 'f.json', '/tmp').listen.trustedProxies);
  assert.deepEqual(['1.2.3.4', '::ffff:1.2.3.4', '2001:db8::1', '10.9.8.7', 'fd12::1', '::1'].map((a) => widest.has(a)), [false, false, false, true, true, true]);
});
