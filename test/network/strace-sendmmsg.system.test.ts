// The quiet test's strace options against a real kernel: a datagram that
// sendmmsg() sends to one port over a UDP socket connected to another goes
// to the port its msg_name names, and the trace must say so (a reader that
// credited it to the connect would hide where it went).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { describeDestination, parseStrace } from './strace-connects.ts';
import { tempDir } from '../support/temp-dir.ts';
import { STRACE_ARGS, tracingMissing } from './traced-serve.ts';

const SENDMMSG = `
import ctypes, socket, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
connected_to, sent_to = int(sys.argv[1]), int(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect(('127.0.0.1', connected_to))
class iovec(ctypes.Structure): _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]
class msghdr(ctypes.Structure): _fields_ = [('name', ctypes.c_void_p), ('namelen', ctypes.c_uint32), ('iov', ctypes.POINTER(iovec)), ('iovlen', ctypes.c_size_t), ('control', ctypes.c_void_p), ('controllen', ctypes.c_size_t), ('flags', ctypes.c_int)]
class mmsghdr(ctypes.Structure): _fields_ = [('hdr', msghdr), ('len', ctypes.c_uint)]
addr = ctypes.create_string_buffer(struct.pack('=H', socket.AF_INET) + struct.pack('!H4s8x', sent_to, socket.inet_aton('127.0.0.1')))
data = ctypes.create_string_buffer(b'x')
iov = iovec(ctypes.cast(data, ctypes.c_void_p), 1)
m = (mmsghdr * 1)()
m[0].hdr = msghdr(ctypes.cast(addr, ctypes.c_void_p), 16, ctypes.pointer(iov), 1, None, 0, 0)
sys.exit(0 if libc.sendmmsg(s.fileno(), m, 1, 0) == 1 else 1)
`;

test('sendmmsg to port B on a UDP socket connected to port A: the trace names B', { skip: tracingMissing() }, async () => {
  const dir = tempDir('strace-sendmmsg');
  const bind = async (): Promise<ReturnType<typeof createSocket>> => {
    const s = createSocket('udp4');
    await new Promise<void>((resolve) => s.bind(0, '127.0.0.1', resolve));
    return s;
  };
  const a = await bind();
  const b = await bind();
  try {
    const got = new Promise<string>((resolve) => b.once('message', (m) => resolve(m.toString())));
    const script = path.join(dir, 'sendmmsg.py');
    writeFileSync(script, SENDMMSG);
    const traceFile = path.join(dir, 'trace.txt');
    const portA = a.address().port;
    const portB = b.address().port;
    const run = spawnSync('strace', [...STRACE_ARGS, '-o', traceFile, 'python3', script, String(portA), String(portB)], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(await got, 'x', 'the datagram reached port B');
    const calls = parseStrace(readFileSync(traceFile, 'utf8')).calls.filter((c) => c.destination.family === 'AF_INET' && c.program.includes('python'));
    assert.deepEqual(
      calls.map((c) => `${c.call} ${describeDestination(c.destination)}`),
      [`connect AF_INET 127.0.0.1:${portA}`, `sendmmsg AF_INET 127.0.0.1:${portB}`],
    );
  } finally {
    a.close();
    b.close();
  }
});
