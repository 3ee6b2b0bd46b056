// Review: the strace reader never sees a sendmmsg()'s addresses.
// With `-s 0` (test/network/traced-serve.ts) strace 6.1 abbreviates every
// array to `[...]`, so each message's msg_name is lost, and the reader then
// credits the send to whatever the descriptor was last connect()ed to. On a
// connected UDP socket Linux sends each message to its own msg_name.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeDestination, parseStrace } from '../network/strace-connects.ts';

const EXEC = '100 1.000000 execve("/usr/bin/node", [...], 0x7ffc8a9ad2c8 /* 35 vars */) = 0';

test('a sendmmsg whose messages strace abbreviated to [...] is not credited to the socket\'s connect: its addresses are unknown', () => {
  // Verbatim strace 6.1 output (`-f -ttt -s 0 -e trace=connect,sendto,sendmsg,sendmmsg`) of a
  // program that connected fd 3 (UDP) to 127.0.0.1:6379 and then sendmmsg()ed one datagram
  // to 192.0.2.53:53, which the kernel delivered there.
  const trace = [
    EXEC,
    '100 1.100000 connect(3, {sa_family=AF_INET, sin_port=htons(6379), sin_addr=inet_addr("127.0.0.1")}, 16) = 0',
    '100 1.200000 sendmmsg(3, [...], 1, 0) = 1',
  ].join('\n');
  const parsed = parseStrace(trace);
  assert.deepEqual(
    { calls: parsed.calls.map((c) => `${c.call} ${describeDestination(c.destination)}`), unreadable: parsed.unreadable },
    { calls: ['connect AF_INET 127.0.0.1:6379'], unreadable: ['100 1.200000 sendmmsg(3, [...], 1, 0) = 1'] },
  );
});

test('a sendmmsg printed in full (-v) counts every message\'s msg_name, not only the first', () => {
  const trace = [
    EXEC,
    '100 1.100000 sendmmsg(3, [{msg_hdr={msg_name={sa_family=AF_INET, sin_port=htons(6379), sin_addr=inet_addr("127.0.0.1")}, msg_namelen=16, msg_iov=[{iov_base=""..., iov_len=1}], msg_iovlen=1, msg_controllen=0, msg_flags=0}}, {msg_hdr={msg_name={sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("192.0.2.53")}, msg_namelen=16, msg_iov=[{iov_base=""..., iov_len=1}], msg_iovlen=1, msg_controllen=0, msg_flags=0}}], 2, 0) = 2',
  ].join('\n');
  assert.deepEqual(
    parseStrace(trace).calls.map((c) => `${c.call} ${describeDestination(c.destination)}`),
    ['sendmmsg AF_INET 127.0.0.1:6379', 'sendmmsg AF_INET 192.0.2.53:53'],
  );
});
