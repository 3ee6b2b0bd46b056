// The quiet test's check of /proc/net before a run: what could answer a DNS
// datagram sent to its nameserver (127.53.0.1) is named in its failure.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NAMESERVER, nameserverListeners } from './traced-serve.ts';

const HEADER = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode';

function row(local: string, state: string): string {
  return `   0: ${local} 00000000:0000 ${state} 00000000:00000000 00:00000000 00000000     0        0 12345 2 0000000000000000 0`;
}

test('nothing bound to port 53 there: empty; the tables are read by name', () => {
  const read: string[] = [];
  const found = nameserverListeners((table) => {
    read.push(table);
    // systemd-resolved's 127.0.0.53:53 and a UDP socket on the nameserver's address but another port do not count.
    return [HEADER, row('3500007F:0035', '07'), row('0100357F:0036', '07'), ''].join('\n');
  });
  assert.deepEqual(found, []);
  assert.deepEqual(read, ['udp', 'tcp', 'udp6', 'tcp6']);
});

test('the nameserver address or a wildcard on port 53 is named; a TCP socket only while it listens', () => {
  const tables: Record<string, string[]> = {
    udp: [row('0100357F:0035', '07'), row('00000000:0035', '07')],
    tcp: [row('0100357F:0035', '0A'), row('00000000:0035', '01')],
    udp6: [row('00000000000000000000000000000000:0035', '07')],
    tcp6: [],
  };
  assert.equal(NAMESERVER, '127.53.0.1');
  assert.deepEqual(
    nameserverListeners((table) => [HEADER, ...(tables[table] ?? [])].join('\n')),
    ['udp 127.53.0.1:53', 'udp 0.0.0.0:53', 'tcp 127.53.0.1:53', 'udp6 [::]:53'],
  );
});
