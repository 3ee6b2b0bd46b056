// A stand-in for systemd's notification socket: python3 binds an AF_UNIX
// datagram socket (Node cannot), receives each message with recvmsg, closes
// the descriptors passed with it (that completes systemd-notify's BARRIER=1
// wait) and prints the message as a JSON line.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';

const RECEIVER = `
import array, json, os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print(json.dumps({"bound": True}), flush=True)
while True:
    data, anc, flags, addr = s.recvmsg(65536, socket.CMSG_SPACE(64 * 4))
    for level, kind, cdata in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            a = array.array("i")
            a.frombytes(cdata[: len(cdata) - (len(cdata) % a.itemsize)])
            for fd in a:
                os.close(fd)
    print(json.dumps({"payload": data.decode("utf-8")}), flush=True)
`;

export const hasPython = spawnSync('python3', ['--version']).status === 0;

/** systemd-notify sends this after every message and waits until the manager closes the descriptor with it. */
export const BARRIER_PAYLOAD = 'BARRIER=1';
const WAIT_MS = 10_000;

export interface NotifyReceiver {
  socketPath: string;
  child: ChildProcess;
  /**
   * The next `count` messages other than BARRIER=1; rejects after 10 s.
   * `onEach` runs as each one arrives, before the next is looked at.
   */
  next(count: number, onEach?: (payload: string) => Promise<void>): Promise<string[]>;
  /** Messages other than BARRIER=1 received and not yet taken by next(). */
  pending(): string[];
}

export async function startNotifyReceiver(dir: string, name: string): Promise<NotifyReceiver> {
  const script = path.join(dir, 'notify-receiver.py');
  writeFileSync(script, RECEIVER);
  const socketPath = path.join(dir, `${name}.sock`);
  const child = spawn('python3', [script, socketPath], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (text: string) => {
    if (stderr.length < 64 * 1024) stderr += text;
  });
  const received: string[] = [];
  let wake: () => void = () => {};
  let markBound: () => void = () => {};
  const bound = new Promise<void>((resolve) => {
    markBound = resolve;
  });
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const value = JSON.parse(line) as { bound?: true; payload?: string };
    if (value.bound === true) markBound();
    else if (value.payload !== undefined && value.payload !== BARRIER_PAYLOAD) received.push(value.payload);
    wake();
  });
  const failed = new Promise<never>((_resolve, reject) => child.once('exit', (code) => reject(new Error(`notify receiver exited with ${code}: ${stderr}`))));
  failed.catch(() => {});
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    bound,
    failed,
    new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`notify receiver did not bind: ${stderr}`)), WAIT_MS);
    }),
  ]).finally(() => clearTimeout(timer));

  return {
    socketPath,
    child,
    pending: () => [...received],
    async next(count, onEach) {
      const taken: string[] = [];
      const deadline = Date.now() + WAIT_MS;
      while (taken.length < count) {
        const payload = received.shift();
        if (payload !== undefined) {
          taken.push(payload);
          await onEach?.(payload);
          continue;
        }
        // Woken by the next line the receiver prints; the deadline only guards against a hang.
        await new Promise<void>((resolve, reject) => {
          const t = setTimeout(() => reject(new Error(`only ${taken.length} of ${count} notifications arrived: ${JSON.stringify(taken)}`)), Math.max(0, deadline - Date.now()));
          wake = () => {
            clearTimeout(t);
            resolve();
          };
        });
      }
      return taken;
    },
  };
}
