// Which addresses count as one client, for the connection share and the admin throttles.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addressGroup } from '../../src/http/address-group.ts';

test('an IPv4 address is its own group; an IPv4-mapped IPv6 address, in either spelling, is its IPv4 address', () => {
  const cases: Array<[string, string]> = [
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['::FFFF:203.0.113.7', '203.0.113.7'],
    ['::ffff:cb00:7107', '203.0.113.7'],
    ['0:0:0:0:0:ffff:cb00:7107', '203.0.113.7'],
  ];
  for (const [address, group] of cases) assert.equal(addressGroup(address), group, address);
});

test('an IPv6 address counts by its /56, however it is written', () => {
  const cases: Array<[string, string]> = [
    ['2001:db8:1:2ff::9', '2001:db8:1:200::/56'],
    ['2001:db8:1:200::1', '2001:db8:1:200::/56'],
    ['2001:0DB8:0001:02AB:0000:0000:0000:0001', '2001:db8:1:200::/56'],
    ['2001:db8:1:2ff:ffff:ffff:ffff:ffff', '2001:db8:1:200::/56'],
    ['2001:db8:1:300::1', '2001:db8:1:300::/56'],
    ['2001:db8:1:ff::1', '2001:db8:1:0::/56'],
    ['::1', '0:0:0:0::/56'],
    ['::', '0:0:0:0::/56'],
    ['fe80::1%eth0', 'fe80:0:0:0::/56'],
    ['64:ff9b::192.0.2.1', '64:ff9b:0:0::/56'],
  ];
  for (const [address, group] of cases) assert.equal(addressGroup(address), group, address);
});

test('what is not an address is its own group', () => {
  for (const text of ['unknown', '', 'proxy.internal', '2001:db8::/56']) assert.equal(addressGroup(text), text);
});
