// The client's address: the socket's peer unless that is a trusted proxy,
// then the rightmost X-Forwarded-For entry that is not a trusted proxy.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { test } from 'node:test';
import { clientAddress, forwardedClient, NO_TRUSTED_PROXIES, trustedProxies } from '../../src/http/client-address.ts';

const proxies = trustedProxies(['10.0.0.0/8', '127.0.0.1', 'fd00::/8']);

function request(peer: string | undefined, forwarded?: string | string[]): IncomingMessage {
  return { socket: { remoteAddress: peer }, headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded } } as unknown as IncomingMessage;
}

test('trusted proxies: IPv4 and IPv6 blocks and single addresses, IPv4-mapped peers included', () => {
  const cases: Array<[string, boolean]> = [
    ['10.0.0.1', true],
    ['10.255.255.255', true],
    ['11.0.0.1', false],
    ['127.0.0.1', true],
    ['127.0.0.2', false],
    ['::ffff:10.1.2.3', true],
    ['::ffff:127.0.0.1', true],
    ['fd12::1', true],
    ['fe80::1', false],
    ['::1', false],
    ['not an address', false],
    ['', false],
  ];
  for (const [address, trusted] of cases) assert.equal(proxies.has(address), trusted, address);
  assert.equal(NO_TRUSTED_PROXIES.has('127.0.0.1'), false);
  assert.equal(trustedProxies([]), NO_TRUSTED_PROXIES);
});

test('a peer that is not a trusted proxy is the client, whatever X-Forwarded-For says', () => {
  assert.equal(clientAddress(request('203.0.113.9', '198.51.100.1'), proxies), '203.0.113.9');
  assert.equal(clientAddress(request('127.0.0.1', '198.51.100.1'), NO_TRUSTED_PROXIES), '127.0.0.1');
  assert.equal(clientAddress(request(undefined), proxies), 'unknown');
});

test('behind trusted proxies: the rightmost entry that is not one; entries to its left are never believed', () => {
  const cases: Array<[string | string[] | undefined, string]> = [
    [undefined, '10.0.0.5'],
    ['198.51.100.1', '198.51.100.1'],
    ['1.1.1.1, 198.51.100.1', '198.51.100.1'],
    ['1.1.1.1, 198.51.100.1, 10.0.0.7', '198.51.100.1'],
    ['1.1.1.1,198.51.100.1,10.0.0.7,127.0.0.1', '198.51.100.1'],
    [['1.1.1.1', '198.51.100.1'], '198.51.100.1'],
    ['2001:db8::1', '2001:db8::1'],
    ['[2001:db8::1]:4711, fd00::2', '2001:db8::1'],
    ['198.51.100.1:5555', '198.51.100.1'],
    // Every entry trusted: the leftmost vouched-for one.
    ['10.0.0.9, 10.0.0.8', '10.0.0.9'],
    // Not an address: the client wrote it (no proxy does); the last address vouched for stands.
    ['evil, 10.0.0.8', '10.0.0.8'],
    ['198.51.100.1, garbage', '10.0.0.5'],
    ['', '10.0.0.5'],
    [' , ', '10.0.0.5'],
    ['[::1', '10.0.0.5'],
    ['1.2.3.4:5:6', '10.0.0.5'],
  ];
  for (const [header, expected] of cases) assert.equal(clientAddress(request('10.0.0.5', header), proxies), expected, JSON.stringify(header));
  assert.equal(clientAddress(request('::ffff:127.0.0.1', '198.51.100.2'), proxies), '198.51.100.2');
});

test('at most 32 entries are walked: a longer run of trusted entries ends at the last one walked', () => {
  const hops = Array.from({ length: 40 }, (_, i) => `10.0.0.${i + 1}`);
  assert.equal(forwardedClient('10.0.0.200', ['198.51.100.1', ...hops].join(', '), proxies), '10.0.0.9');
});
