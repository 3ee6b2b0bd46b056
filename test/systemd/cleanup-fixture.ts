// The test process that ./container-cleanup.system.test.ts kills: it makes
// what a systemd test makes (under a reaper), prints one JSON line saying
// what it made, and then waits to be killed.
//
//   node cleanup-fixture.js stand-in TMP CACHE   a bind mount of CACHE at TMP/mount, kept
//                                                busy by a process the plan does not name,
//                                                and a process tree named by an argument
//   node cleanup-fixture.js reap TMP CACHE       the same, then reap() and the report printed
//   node cleanup-fixture.js container LOWER      a container booted from LOWER, with a
//                                                process of the test in its network
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startReaper } from '../support/reaper.ts';
import { BootFailure, Container } from './nspawn-container.ts';

export interface StandIn {
  /** The processes the plan names: a shell started with the marker argument, and its two children. */
  named: number[];
  /** A process outside the plan holding the mount busy (its working directory is in it); the test ends it. */
  holder: number;
}

export interface BootedContainer {
  nspawn: number;
  leader: number;
  /** A process of the test in the container's network namespace only. */
  helper: number;
  tmp: string;
  name: string;
}

const say = (what: unknown): void => {
  process.stdout.write(`${JSON.stringify(what)}\n`);
};

const waitForever = (): void => {
  setInterval(() => undefined, 60_000);
};

/** The children of `pid`, once it has `count` of them. */
async function childrenOf(pid: number, count: number): Promise<number[]> {
  for (;;) {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ').filter((child) => child !== '');
    if (children.length >= count) return children.map(Number);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function standIn(tmp: string, cache: string, reapItself: boolean): Promise<void> {
  const marker = `portcullis-stand-in-${process.pid}`;
  const mount = path.join(tmp, 'mount');
  const reaper = startReaper({ killArguments: [marker], remove: [tmp] });
  mkdirSync(mount);
  writeFileSync(path.join(tmp, 'scratch-file'), 'made by the fixture\n');
  const bind = spawn('mount', ['--bind', cache, mount], { stdio: 'inherit' });
  await new Promise((resolve) => bind.on('exit', resolve));
  const shell = spawn('sh', ['-c', 'sleep 600 & sleep 600 & wait', marker], { stdio: 'ignore' });
  const holder = spawn('sleep', ['600'], { cwd: mount, stdio: 'ignore', detached: true });
  // Nothing but the reaper keeps this process waiting (a test process at its end).
  shell.unref();
  holder.unref();
  const named = [shell.pid ?? 0, ...(await childrenOf(shell.pid ?? 0, 2))];
  // Killed before the reaper listens, the reaper would find its first write failing and reap then: a path of its own.
  await reaper.ready;
  say({ named, holder: holder.pid ?? 0 } satisfies StandIn);
  if (reapItself) say(await reaper.reap());
  else waitForever();
}

async function container(lower: string): Promise<void> {
  const made = Container.create({ lower, log: () => undefined });
  try {
    await made.boot(60_000);
  } catch (err) {
    await made.destroy();
    if (err instanceof BootFailure) return say({ skip: `systemd-nspawn cannot boot a container here: ${err.message}` });
    throw err;
  }
  const helper = made.spawnInNetwork('-e', ['setInterval(() => {}, 60000)']);
  say({ nspawn: made.nspawnPid, leader: made.leader, helper: helper.pid ?? 0, tmp: made.tmp, name: made.name } satisfies BootedContainer);
  waitForever();
}

const [mode, ...args] = process.argv.slice(2);
if (mode === 'stand-in' || mode === 'reap') await standIn(args[0] as string, args[1] as string, mode === 'reap');
else if (mode === 'container') await container(args[0] as string);
else throw new Error(`cleanup-fixture: unknown mode ${mode}`);
