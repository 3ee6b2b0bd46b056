// The strace reader the quiet test stands on: each address form strace 6
// prints, every address a send names, address-less sends attributed to
// their socket's connect, and every line it cannot read kept for the test to
// show rather than dropped.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeDestination, parseStrace } from './strace-connects.ts';

const EXEC = '100 1795933981.223131 execve("/usr/bin/node", [...], 0x7ffc8a9ad2c8 /* 35 vars */) = 0';

function destinations(text: string): string[] {
  return parseStrace(text).calls.map((c) => `${c.call} ${describeDestination(c.destination)}`);
}

test('connect: AF_INET, AF_INET6, AF_UNIX (a path and an abstract name) and another family, whatever the result', () => {
  const trace = [
    EXEC,
    '100 1795933981.423369 connect(19, {sa_family=AF_INET, sin_port=htons(6379), sin_addr=inet_addr("127.0.0.1")}, 16) = -1 EINPROGRESS (Operation now in progress)',
    '101 1795933981.500000 connect(20, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "::1", &sin6_addr), sin6_scope_id=0}, 28) = 0',
    '101 1795933981.600000 connect(21, {sa_family=AF_UNIX, sun_path="/var/run/nscd/socket"}, 110) = -1 ENOENT (No such file or directory)',
    '100 1795933981.700000 connect(22, {sa_family=AF_UNIX, sun_path=@"/tmp/.X11-unix/X0"}, 20) = 0',
    '100 1795933981.800000 sendto(23, [{nlmsg_len=20, nlmsg_type=RTM_GETADDR, nlmsg_flags=NLM_F_REQUEST|NLM_F_DUMP, nlmsg_seq=1, nlmsg_pid=0}, {ifa_family=AF_UNSPEC, ...}], 20, 0, {sa_family=AF_NETLINK, nl_pid=0, nl_groups=00000000}, 12) = 20',
    '100 1795933981.900000 +++ exited with 0 +++',
  ].join('\n');
  assert.deepEqual(destinations(trace), [
    'connect AF_INET 127.0.0.1:6379',
    'connect AF_INET6 [::1]:443',
    'connect AF_UNIX /var/run/nscd/socket',
    'connect AF_UNIX @/tmp/.X11-unix/X0',
    'sendto AF_NETLINK nl_pid=0, nl_groups=00000000',
  ]);
  const parsed = parseStrace(trace);
  assert.deepEqual(parsed.execs, ['/usr/bin/node']);
  assert.deepEqual(parsed.unreadable, []);
  assert.deepEqual(
    parsed.calls.slice(0, 2).map((c) => [c.tid, c.timeMs, c.fd]),
    [
      [100, 1795933981423.369, 19],
      [101, 1795933981500, 20],
    ],
  );
});

test('a send counts each address it names; one without goes where its descriptor was connected; one on a descriptor never connected is unattributed', () => {
  const trace = [
    '100 1.000000 connect(18, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("127.53.0.1")}, 16) = 0',
    '100 1.100000 sendmmsg(18, [{msg_hdr={msg_name=NULL, msg_namelen=0, msg_iov=[{iov_base=""..., iov_len=31}], msg_iovlen=1, msg_controllen=0, msg_flags=0}, msg_len=31}, {msg_hdr={msg_name=NULL, msg_namelen=0, msg_iov=[{iov_base=""..., iov_len=31}], msg_iovlen=1, msg_controllen=0, msg_flags=0}}], 2, MSG_NOSIGNAL) = 1',
    '100 1.200000 sendto(18, ""..., 31, MSG_NOSIGNAL, NULL, 0) = 31',
    '100 1.300000 sendmsg(19, {msg_name={sa_family=AF_INET, sin_port=htons(9999), sin_addr=inet_addr("127.0.0.1")}, msg_namelen=16, msg_iov=[{iov_base=""..., iov_len=13}], msg_iovlen=1, msg_controllen=0, msg_flags=0}, 0) = 13',
    '100 1.400000 sendmsg(20, {msg_name=NULL, msg_namelen=0, msg_iov=[{iov_base=""..., iov_len=13}], msg_iovlen=1, msg_controllen=0, msg_flags=0}, 0) = 13',
    '100 1.500000 sendto(21, ""..., 4, 0, {sa_family=AF_INET6, sin6_port=htons(4318), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "fd00::5", &sin6_addr), sin6_scope_id=0}, 28) = 4',
  ].join('\n');
  assert.deepEqual(destinations(trace), [
    'connect AF_INET 127.53.0.1:53',
    'sendmmsg AF_INET 127.53.0.1:53',
    'sendmmsg AF_INET 127.53.0.1:53',
    'sendto AF_INET 127.53.0.1:53',
    'sendmsg AF_INET 127.0.0.1:9999',
    'sendmsg unattributed sendmsg on descriptor 20, which no connect() in the trace named',
    'sendto AF_INET6 [fd00::5]:4318',
  ]);
  assert.deepEqual(parseStrace(trace).unreadable, []);
});

test('a send that names an address on a connected socket goes to that address, not to the connect', () => {
  const trace = [
    '100 1.0 connect(3, {sa_family=AF_INET, sin_port=htons(6379), sin_addr=inet_addr("127.0.0.1")}, 16) = 0',
    '100 1.1 sendmsg(3, {msg_name={sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("192.0.2.53")}, msg_namelen=16, msg_iov=[{iov_base=""..., iov_len=1}], msg_iovlen=1, msg_controllen=0, msg_flags=0}, 0) = 1',
    '100 1.2 sendto(3, ""..., 1, 0, {sa_family=AF_INET, sin_port=htons(54), sin_addr=inet_addr("192.0.2.53")}, 16) = 1',
  ].join('\n');
  assert.deepEqual(destinations(trace), ['connect AF_INET 127.0.0.1:6379', 'sendmsg AF_INET 192.0.2.53:53', 'sendto AF_INET 192.0.2.53:54']);
});

test('a sendmmsg printed in full (-v) counts every message\'s msg_name, not only the first; NULL ones go where the socket was connected', () => {
  const trace = [
    EXEC,
    '100 1.050000 connect(3, {sa_family=AF_INET, sin_port=htons(9), sin_addr=inet_addr("127.0.0.1")}, 16) = 0',
    '100 1.100000 sendmmsg(3, [{msg_hdr={msg_name={sa_family=AF_INET, sin_port=htons(6379), sin_addr=inet_addr("127.0.0.1")}, msg_namelen=16, msg_iov=[{iov_base=""..., iov_len=1}], msg_iovlen=1, msg_controllen=0, msg_flags=0}, msg_len=1}, {msg_hdr={msg_name={sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("192.0.2.53")}, msg_namelen=16, msg_iov=[{iov_base=""..., iov_len=1}], msg_iovlen=1, msg_controllen=0, msg_flags=0}, msg_len=1}, {msg_hdr={msg_name=NULL, msg_namelen=0, msg_iov=[{iov_base=""..., iov_len=1}], msg_iovlen=1, msg_controllen=0, msg_flags=0}, msg_len=1}], 3, 0) = 3',
  ].join('\n');
  assert.deepEqual(destinations(trace), ['connect AF_INET 127.0.0.1:9', 'sendmmsg AF_INET 127.0.0.1:6379', 'sendmmsg AF_INET 192.0.2.53:53', 'sendmmsg AF_INET 127.0.0.1:9']);
});

test('a sendmmsg or sendmsg whose messages strace abbreviated is unreadable, never credited to the socket\'s connect', () => {
  // strace 6.1 without -v (`-f -ttt -s 0`) abbreviates a sendmmsg's array to [...].
  const abbreviated = [
    '100 1.200000 sendmmsg(3, [...], 1, 0) = 1',
    '100 1.300000 sendmmsg(3, [{msg_hdr={msg_name=NULL, msg_namelen=0, msg_iov=[{iov_base=""..., iov_len=1}], msg_iovlen=1, msg_controllen=0, msg_flags=0}}, ...], 4, 0) = 4',
    '100 1.400000 sendmsg(3, {...}, 0) = 1',
    '100 1.500000 sendmsg(3, {msg_name=0x7ffd0000, msg_namelen=16, msg_iov=[{iov_base=""..., iov_len=1}], msg_iovlen=1, msg_controllen=0, msg_flags=0}, 0) = 1',
  ];
  const parsed = parseStrace([EXEC, '100 1.100000 connect(3, {sa_family=AF_INET, sin_port=htons(6379), sin_addr=inet_addr("127.0.0.1")}, 16) = 0', ...abbreviated].join('\n'));
  assert.deepEqual(
    { calls: parsed.calls.map((c) => `${c.call} ${describeDestination(c.destination)}`), unreadable: parsed.unreadable },
    { calls: ['connect AF_INET 127.0.0.1:6379'], unreadable: abbreviated },
  );
});

test('-yy descriptors: read through their decoration; a netlink address carries the protocol strace printed, and only that one', () => {
  const trace = [
    '100 1.0 connect(18<UNIX-STREAM:[12221954]>, {sa_family=AF_UNIX, sun_path="/var/run/nscd/socket"}, 110) = -1 ENOENT (No such file or directory)',
    '100 1.1 connect(19<TCP:[12221416]>, {sa_family=AF_INET, sin_port=htons(1), sin_addr=inet_addr("127.0.0.1")}, 16) = -1 EINPROGRESS (Operation now in progress)',
    '100 1.2 sendto(3<NETLINK:[ROUTE:32690]>, [{nlmsg_len=20, nlmsg_type=RTM_GETADDR, nlmsg_flags=NLM_F_REQUEST|NLM_F_DUMP, nlmsg_seq=1795935862, nlmsg_pid=0}, {ifa_family=AF_UNSPEC, ...}], 20, 0, {sa_family=AF_NETLINK, nl_pid=0, nl_groups=00000000}, 12) = 20',
    '100 1.3 sendto(4<NETLINK:[AUDIT:32691]>, [], 0, 0, {sa_family=AF_NETLINK, nl_pid=0, nl_groups=00000000}, 12) = 0',
    '100 1.4 sendmsg(20<UNIX-DGRAM:[5->6,"/run/a>b.sock"]>, {msg_name=NULL, msg_namelen=0, msg_iov=[{iov_base=""..., iov_len=1}], msg_iovlen=1, msg_controllen=0, msg_flags=0}, 0) = 1',
    '100 1.5 sendto(19<TCP:[127.0.0.1:40000->127.0.0.1:1]>, ""..., 3, 0, NULL, 0) = 3',
  ].join('\n');
  assert.deepEqual(destinations(trace), [
    'connect AF_UNIX /var/run/nscd/socket',
    'connect AF_INET 127.0.0.1:1',
    'sendto AF_NETLINK NETLINK_ROUTE nl_pid=0, nl_groups=00000000',
    'sendto AF_NETLINK NETLINK_AUDIT nl_pid=0, nl_groups=00000000',
    'sendmsg unattributed sendmsg on descriptor 20, which no connect() in the trace named',
    'sendto AF_INET 127.0.0.1:1',
  ]);
  assert.deepEqual(parseStrace(trace).unreadable, []);
});

test('AF_UNSPEC dissolves a connection: no entry, and a later send on that descriptor is unattributed', () => {
  const trace = [
    '100 1.0 connect(18, {sa_family=AF_INET, sin_port=htons(80), sin_addr=inet_addr("127.0.0.1")}, 16) = 0',
    '100 1.1 connect(18, {sa_family=AF_UNSPEC, sa_data="\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0"}, 16) = 0',
    '100 1.2 sendto(18, ""..., 1, 0, NULL, 0) = 1',
  ].join('\n');
  assert.deepEqual(destinations(trace), ['connect AF_INET 127.0.0.1:80', 'sendto unattributed sendto on descriptor 18, which no connect() in the trace named']);
});

test('a call strace split in two (-f): the address is read from the unfinished half, the resumed half adds nothing', () => {
  const trace = [
    '100 1.0 connect(18, {sa_family=AF_INET, sin_port=htons(6379), sin_addr=inet_addr("127.0.0.1")}, 16 <unfinished ...>',
    '101 1.1 connect(19, {sa_family=AF_UNIX, sun_path="/run/a.sock"}, 110) = 0',
    '100 1.2 <... connect resumed>) = -1 EINPROGRESS (Operation now in progress)',
  ].join('\n');
  assert.deepEqual(destinations(trace), ['connect AF_INET 127.0.0.1:6379', 'connect AF_UNIX /run/a.sock']);
  assert.deepEqual(parseStrace(trace).unreadable, []);
});

test('lines it cannot read are kept, not skipped: an unknown line, a sockaddr in an unknown form, a call without a descriptor', () => {
  const odd = [
    'strace: Process 100 attached',
    '100 1.0 connect(18, {sa_family=AF_INET, sin_addr=inet_addr("127.0.0.1")}, 16) = 0',
    '100 1.1 connect(AT_FDCWD, {sa_family=AF_UNIX, sun_path="/x"}, 110) = 0',
    '100 1.2 execve(0x1234, [...], 0x5678) = 0',
  ];
  const parsed = parseStrace(['100 1.0 +++ killed by SIGKILL +++', ...odd].join('\n'));
  assert.deepEqual(parsed.unreadable, odd);
  assert.deepEqual(parsed.calls, []);
  assert.deepEqual(parsed.execs, []);
});

test("a child process's calls carry its program and are read against its own descriptors", () => {
  const trace = [
    EXEC,
    '100 1.0 connect(3, {sa_family=AF_INET, sin_port=htons(6379), sin_addr=inet_addr("127.0.0.1")}, 16) = 0',
    '300  1.1 execve("/usr/bin/systemd-notify", [...], 0x7ffccb985398 /* 1 var */) = 0',
    '300  1.2 sendmsg(3, {msg_name={sa_family=AF_UNIX, sun_path="/run/notify.sock"}, msg_namelen=20, msg_iov=[{iov_base=""..., iov_len=7}], msg_iovlen=1, msg_control=[{cmsg_len=28, cmsg_level=SOL_SOCKET, cmsg_type=SCM_CREDENTIALS, cmsg_data={pid=300, uid=0, gid=0}}], msg_controllen=32, msg_flags=0}, MSG_NOSIGNAL) = 7',
    '300  1.3 sendmsg(4, {msg_name=NULL, msg_namelen=0, msg_iov=[{iov_base=""..., iov_len=1}], msg_iovlen=1, msg_controllen=0, msg_flags=0}, 0) = 1',
    '101 1.4 sendto(3, ""..., 5, 0, NULL, 0) = 5',
  ].join('\n');
  const parsed = parseStrace(trace);
  assert.deepEqual(parsed.execs, ['/usr/bin/node', '/usr/bin/systemd-notify']);
  assert.deepEqual(
    parsed.calls.map((c) => `${c.program} ${c.call} ${describeDestination(c.destination)}`),
    [
      '/usr/bin/node connect AF_INET 127.0.0.1:6379',
      '/usr/bin/systemd-notify sendmsg AF_UNIX /run/notify.sock',
      '/usr/bin/systemd-notify sendmsg unattributed sendmsg on descriptor 4, which no connect() in the trace named',
      '/usr/bin/node sendto AF_INET 127.0.0.1:6379',
    ],
  );
});
