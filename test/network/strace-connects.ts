// Reads what `strace -f -ttt -v -yy -s 0 -e trace=connect,sendto,sendmsg,sendmmsg,execve
// -e signal=none` wrote and turns it into the destinations a process tree
// addressed: one entry per connect(), and per message a send names an
// address for (sendto's dest_addr, sendmsg's msg_name, and each msg_name of
// a sendmmsg's array). A message without an address (msg_name=NULL, a NULL
// dest_addr) goes where its socket was connected, which a connect() earlier
// in the trace already named; one on a descriptor no connect() named is kept
// as an "unattributed" entry, so nothing the kernel was asked to send is lost.
// A connected datagram socket still sends a message that names an address to
// that address, so a send is credited to the connect only when it names none.
//
// -v keeps strace from abbreviating a sendmmsg's array to `[...]` (-s 0 still
// empties every string, so lines stay short). A send whose messages show
// abbreviated anyway is unreadable, never credited to the connect.
//
// -yy prints what each descriptor is (`3<NETLINK:[ROUTE:1234]>`): a netlink
// address is named with its protocol (`NETLINK_ROUTE nl_pid=0, ...`), so a
// reader can tell glibc's routing query from any other netlink socket; one
// whose protocol strace did not print is named without it.
//
// Every attempt counts, whatever the call returned (ECONNREFUSED, ENOENT,
// EINPROGRESS): the question is whom the process tried to reach.
//
// Descriptor numbers are per process. The traced command's threads share
// one table; a child process shows as a thread id that calls execve() (the
// child of a Node.js process runs no code of its own between fork and exec),
// and its calls are read against a table of its own and named by its program.
// Limit: clone and fork are not traced, so a thread of a child, or a process
// a child forks, is read against the traced command's table; a connect()
// always names its address itself, and only an address-less send on such a
// thread could be misread (as the traced command's descriptor, or as
// unattributed). The quiet test's only child, systemd-notify, is single-threaded
// and forks nothing.

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

/**
 * Each message's msg_name in a sendmsg's or sendmmsg's arguments: the address,
 * or null for msg_name=NULL (or AF_UNSPEC). Throws when strace abbreviated
 * the messages (`[...]`, `{...}`, an array cut short) or printed a name in a
 * form not read here: those addresses are unknown.
 */
export function messageNames(call: 'sendmsg' | 'sendmmsg', args: string): Array<Destination | null> {
  const messages = args.replace(/^\d+(?:<.*?>)?, /, '');
  if (call === 'sendmsg' && !messages.startsWith('{msg_name=')) throw new Error('sendmsg without a readable msghdr');
  if (call === 'sendmmsg' && !messages.startsWith('[{msg_hdr={msg_name=')) throw new Error('sendmmsg without a readable array of messages');
  if (/\[\.\.\.\]|\{\.\.\.\}|\}, \.\.\.\]/.test(messages)) throw new Error('messages abbreviated');
  const names: Array<Destination | null> = [];
  for (const at of messages.matchAll(/msg_name=/g)) {
    const rest = messages.slice((at.index ?? 0) + 'msg_name='.length);
    if (rest.startsWith('NULL')) names.push(null);
    else if (rest.startsWith('{sa_family=')) names.push(sockaddrIn(rest));
    else throw new Error('a msg_name in an unknown form');
  }
  if (call === 'sendmmsg' && names.length !== [...messages.matchAll(/\{msg_hdr=/g)].length) throw new Error('a message without msg_name');
  return names;
}

/** A netlink address named with the protocol -yy printed for its descriptor (`NETLINK:[ROUTE:...]`: NETLINK_ROUTE). */
function withProtocol(d: Destination | null, decoration: string | undefined): Destination | null {
  if (d === null || d.family !== 'AF_NETLINK') return d;
  const protocol = /^NETLINK:\[([A-Z0-9_]+):/.exec(decoration ?? '')?.[1];
  return protocol === undefined ? d : { ...d, address: `NETLINK_${protocol} ${d.address}` };
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
    // -yy's decoration can hold "->" (a connected socket's two ends): it ends at the first ">, ".
    const fd = /^(\d+)(?:<(.*?)>)?, /.exec(args);
    if (fd === null) {
      unreadable.push(line);
      continue;
    }
    let named: Array<Destination | null>;
    try {
      named = (call === 'sendmsg' || call === 'sendmmsg' ? messageNames(call, args) : [sockaddrIn(args)]).map((d) => withProtocol(d, fd[2]));
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
      const to = named[0] ?? null;
      // A connect() with AF_UNSPEC names no one and needs no entry.
      if (to === null) {
        table.delete(descriptor);
        continue;
      }
      table.set(descriptor, to);
    }
    for (const name of named) {
      calls.push({
        tid,
        program: child ?? execs[0] ?? '(before any execve)',
        timeMs: Number(m[2]) * 1000,
        call: call as TracedCall['call'],
        fd: descriptor,
        destination: name ?? table.get(descriptor) ?? { family: 'unattributed', address: `${call} on descriptor ${descriptor}, which no connect() in the trace named`, port: null },
      });
    }
  }
  return { calls, execs, unreadable };
}

/** "AF_INET 127.0.0.1:6379", "AF_INET6 [::1]:443", "AF_UNIX /run/x.sock": one line a reader can compare. */
export function describeDestination(d: Destination): string {
  if (d.port === null) return `${d.family} ${d.address}`;
  return d.family === 'AF_INET6' ? `${d.family} [${d.address}]:${d.port}` : `${d.family} ${d.address}:${d.port}`;
}
