// Reads what `strace -f -ttt -s 0 -e trace=connect,sendto,sendmsg,sendmmsg,execve
// -e signal=none` wrote and turns it into the destinations a process tree
// addressed: one entry per connect(), and per send that names an address
// (sendto's dest_addr, sendmsg's msg_name). A send without an address goes
// where its socket was connected, which a connect() earlier in the trace
// already named; one on a descriptor no connect() named is kept as an
// "unattributed" entry, so nothing the kernel was asked to send is lost.
//
// Every attempt counts, whatever the call returned (ECONNREFUSED, ENOENT,
// EINPROGRESS): the question is whom the process tried to reach.
//
// Descriptor numbers are per process. The traced command's threads share
// one table; a child process shows as a thread id that calls execve() (the
// child of a Node.js process runs no code of its own between fork and exec),
// and its calls are read against a table of its own and named by its program.

/** One destination: family and where, or the reason it is not known. */
export interface Destination {
  /** AF_INET, AF_INET6, AF_UNIX, another AF_* name, or "unattributed". */
  family: string;
  /** The IP address, the socket path (abstract ones start with "@"), or for other families what strace printed. */
  address: string;
  /** The port for AF_INET and AF_INET6; null otherwise. */
  port: number | null;
}

export interface TracedCall {
  /** The thread's id as strace printed it. */
  tid: number;
  /** The program that made the call: the traced command's, or a child's (what it execve'd). */
  program: string;
  /** CLOCK_REALTIME in milliseconds (strace -ttt, microseconds kept as a fraction). */
  timeMs: number;
  call: 'connect' | 'sendto' | 'sendmsg' | 'sendmmsg';
  fd: number;
  destination: Destination;
}

export interface ParsedTrace {
  calls: TracedCall[];
  /** The programs execve() ran, in order: the traced command first. */
  execs: string[];
  /** Lines of a traced call that did not parse: each is a failure for the caller to show. */
  unreadable: string[];
}

const LINE = /^(\d+) +(\d+\.\d+) +(?:(connect|sendto|sendmsg|sendmmsg|execve)\((.*)|<\.\.\. (?:connect|sendto|sendmsg|sendmmsg|execve) resumed>.*)$/;
const EXITED = /^\d+ +\d+\.\d+ \+\+\+ (?:exited with \d+|killed by SIG[A-Z0-9]+(?: \(core dumped\))?) \+\+\+$/;

/** The sockaddr strace printed inside `text`, or null when there is none. */
export function sockaddrIn(text: string): Destination | null {
  const family = /\{sa_family=(AF_[A-Z0-9]+)(.*)$/.exec(text);
  if (family === null) return null;
  const name = family[1] as string;
  const rest = family[2] as string;
  if (name === 'AF_INET') {
    const m = /^, sin_port=htons\((\d+)\), sin_addr=inet_addr\("([0-9.]+)"\)\}/.exec(rest);
    if (m === null) throw new Error('an AF_INET address strace printed in an unknown form');
    return { family: name, address: m[2] as string, port: Number(m[1]) };
  }
  if (name === 'AF_INET6') {
    const m = /^, sin6_port=htons\((\d+)\), sin6_flowinfo=htonl\(\d+\), inet_pton\(AF_INET6, "([0-9a-fA-F:.]+)", &sin6_addr\)/.exec(rest);
    if (m === null) throw new Error('an AF_INET6 address strace printed in an unknown form');
    return { family: name, address: m[2] as string, port: Number(m[1]) };
  }
  if (name === 'AF_UNIX') {
    const m = /^, sun_path=(@?)"((?:[^"\\]|\\.)*)"\}/.exec(rest);
    if (m === null) throw new Error('an AF_UNIX address strace printed in an unknown form');
    return { family: name, address: `${m[1] as string}${m[2] as string}`, port: null };
  }
  // AF_UNSPEC dissolves a datagram socket's association: it names no one.
  if (name === 'AF_UNSPEC') return null;
  const end = rest.indexOf('}');
  return { family: name, address: (end < 0 ? rest : rest.slice(0, end)).replace(/^, /, ''), port: null };
}

/** The whole trace; a line of a traced call that cannot be read goes to `unreadable`, never away. */
export function parseStrace(text: string): ParsedTrace {
  const calls: TracedCall[] = [];
  const execs: string[] = [];
  const unreadable: string[] = [];
  /** Per process (the traced command: 0, a child: its id), where each descriptor was last connected. */
  const connected = new Map<number, Map<number, Destination>>();
  /** The children: thread id to program. */
  const children = new Map<number, string>();
  for (const line of text.split('\n')) {
    if (line === '' || EXITED.test(line)) continue;
    const m = LINE.exec(line);
    if (m === null) {
      unreadable.push(line);
      continue;
    }
    const call = m[3];
    // A resumed line carries only the result: the arguments were on the unfinished one.
    if (call === undefined) continue;
    const args = m[4] as string;
    if (call === 'execve') {
      const program = /^"((?:[^"\\]|\\.)*)"/.exec(args);
      if (program === null) {
        unreadable.push(line);
        continue;
      }
      if (execs.length > 0) children.set(Number(m[1]), program[1] as string);
      execs.push(program[1] as string);
      continue;
    }
    const fd = /^(\d+),/.exec(args);
    if (fd === null) {
      unreadable.push(line);
      continue;
    }
    let named: Destination | null;
    try {
      named = sockaddrIn(args);
    } catch {
      unreadable.push(line);
      continue;
    }
    const descriptor = Number(fd[1]);
    const tid = Number(m[1]);
    const child = children.get(tid);
    const process = child === undefined ? 0 : tid;
    let table = connected.get(process);
    if (table === undefined) {
      table = new Map();
      connected.set(process, table);
    }
    if (call === 'connect') {
      if (named === null) table.delete(descriptor);
      else table.set(descriptor, named);
    }
    const destination = named ?? table.get(descriptor);
    // A connect() with AF_UNSPEC names no one and needs no entry.
    if (call === 'connect' && named === null) continue;
    calls.push({
      tid,
      program: child ?? execs[0] ?? '(before any execve)',
      timeMs: Number(m[2]) * 1000,
      call: call as TracedCall['call'],
      fd: descriptor,
      destination: destination ?? { family: 'unattributed', address: `${call} on descriptor ${descriptor}, which no connect() in the trace named`, port: null },
    });
  }
  return { calls, execs, unreadable };
}

/** "AF_INET 127.0.0.1:6379", "AF_INET6 [::1]:443", "AF_UNIX /run/x.sock": one line a reader can compare. */
export function describeDestination(d: Destination): string {
  if (d.port === null) return `${d.family} ${d.address}`;
  return d.family === 'AF_INET6' ? `${d.family} [${d.address}]:${d.port}` : `${d.family} ${d.address}:${d.port}`;
}
