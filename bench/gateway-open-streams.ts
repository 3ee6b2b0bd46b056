// Memory per open stream, for bench/gateway.ts: `count` streams opened at once
// through one gateway to the fake upstream's held model, so that every one is
// open (its first event received) at the same time; the gateway's resident
// memory (VmRSS) and open file descriptors are read from /proc before and
// while they are open. Then the upstream is told to finish them, and each must
// end with [DONE]: an open stream that is lost does not count as cheap.

import { Buffer } from 'node:buffer';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { CHAT_PATH, type LoadTarget } from './gateway-load.ts';

const OPEN_TIMEOUT_MS = 60_000;
const DONE_TAIL = 'data: [DONE]\n\n';

export interface OpenStreamsResult {
  count: number;
  opened: number;
  completed: number;
  rssBeforeBytes: number;
  rssOpenBytes: number;
  fdsBefore: number;
  fdsOpen: number;
}

/** VmRSS of a process, bytes (Linux). */
function rssBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (match === null) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

function openFds(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

interface OpenStream {
  opened: Promise<void>;
  finished: Promise<boolean>;
}

function openStream(target: LoadTarget, body: Buffer, agent: http.Agent): OpenStream {
  let markOpened!: () => void;
  let failOpen!: (error: Error) => void;
  const opened = new Promise<void>((resolve, reject) => {
    markOpened = resolve;
    failOpen = reject;
  });
  const finished = new Promise<boolean>((resolve) => {
    const req = http.request({
      host: '127.0.0.1',
      port: target.port,
      path: CHAT_PATH,
      method: 'POST',
      agent,
      headers: { ...target.headers, 'content-type': 'application/json', 'content-length': body.length },
    });
    req.on('response', (res) => {
      let tail = '';
      res.setEncoding('utf8');
      res.on('data', (text: string) => {
        markOpened();
        tail = (tail + text).slice(-DONE_TAIL.length);
      });
      res.on('end', () => resolve(res.statusCode === 200 && tail === DONE_TAIL));
      res.on('error', () => resolve(false));
    });
    req.on('error', (error) => {
      failOpen(error);
      resolve(false);
    });
    req.end(body);
  });
  // A stream that never opens is reported by the count, not thrown.
  opened.catch(() => undefined);
  return { opened, finished };
}

/** Opens `count` held streams through the gateway `pid` listening at `target`,
 * measures, then has the upstream release them (`release`) and counts those
 * that completed. With `batch`, the streams are opened that many at a time,
 * each batch once the one before is open: thousands of connections in the
 * same instant overflow the listen backlogs of a 2-CPU machine and measure
 * that, not what an open stream costs. */
export async function measureOpenStreams(pid: number, target: LoadTarget, body: Buffer, count: number, release: () => void, batch = count): Promise<OpenStreamsResult> {
  const agent = new http.Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  try {
    const rssBeforeBytes = rssBytes(pid);
    const fdsBefore = openFds(pid);
    const streams: OpenStream[] = [];
    let opened = 0;
    for (let first = 0; first < count; first += batch) {
      const wave: OpenStream[] = [];
      for (let i = first; i < Math.min(count, first + batch); i++) wave.push(openStream(target, body, agent));
      streams.push(...wave);
      await Promise.race([
        Promise.all(wave.map((s) => s.opened.then(() => void opened++, () => undefined))),
        new Promise((resolve) => setTimeout(resolve, OPEN_TIMEOUT_MS).unref()),
      ]);
    }
    // Let the event loops settle (buffers handed over, timers armed) before reading.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const rssOpenBytes = rssBytes(pid);
    const fdsOpen = openFds(pid);
    release();
    const results = await Promise.all(streams.map((s) => s.finished));
    return { count, opened, completed: results.filter((ok) => ok).length, rssBeforeBytes, rssOpenBytes, fdsBefore, fdsOpen };
  } finally {
    agent.destroy();
  }
}

/** One row per gateway: streams open and completed, RSS before and while open, per stream, descriptors. */
export function formatOpenStreams(rows: readonly { target: string; result: OpenStreamsResult }[]): string {
  const mib = (bytes: number): string => (bytes / 1048576).toFixed(1);
  const lines = [
    '| target | streams | opened | completed | RSS before MiB | RSS open MiB | kB per open stream | fds before | fds open |',
    '|:-------|--------:|-------:|----------:|---------------:|-------------:|-------------------:|-----------:|---------:|',
  ];
  for (const { target, result: r } of rows) {
    const perStream = r.opened > 0 ? ((r.rssOpenBytes - r.rssBeforeBytes) / r.opened / 1024).toFixed(1) : '-';
    lines.push(`| ${target} | ${r.count} | ${r.opened} | ${r.completed} | ${mib(r.rssBeforeBytes)} | ${mib(r.rssOpenBytes)} | ${perStream} | ${r.fdsBefore} | ${r.fdsOpen} |`);
  }
  return lines.join('\n');
}
