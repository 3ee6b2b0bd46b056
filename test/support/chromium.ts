// The browser tests' Chromium: Debian's, driven by playwright-core. One
// browser per process, launched when a file first needs it and shared by
// every file the process runs; each file opens contexts of its own (cookies,
// storage, permissions), closed when that file ends.
//
// The browser closes when the last file that asked for it has ended, so the
// process can exit; a file that ends while others of the same process are
// still to come (declared, or files of the same bundle not begun yet) leaves
// it open for them a moment. It talks to this process over a
// pipe and exits when the pipe closes, so it goes with the process however
// the process dies (SIGKILL, a crash). While it is open, SIGINT, SIGTERM and
// SIGHUP end the process with the usual status (128 + the signal's number)
// through process.exit, so that the exit handlers run: playwright's kills the
// browser and removes its profile directory, temp-dir's removes the tests'.
// Playwright's own signal handlers are off: they close the browser and leave
// the process running.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import os from 'node:os';
import { after, before } from 'node:test';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions } from 'playwright-core';
import { filesStillToRun } from './suite/bundle-state.ts';

const CHROMIUM = '/usr/bin/chromium';

/**
 * The host resolver knows loopback only: nothing a page names (the OpenID
 * provider's login page asks for a web font) leaves the machine, and no
 * request needs intercepting to make sure of it.
 */
const ARGS = ['--disable-gpu', '--disable-quic', '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1'];

/** What every context starts from: the dates and numbers the tests assert are en-US, UTC. */
const CONTEXT_DEFAULTS: BrowserContextOptions = { locale: 'en-US', timezoneId: 'UTC' };

/**
 * When the last file using the browser ends but files that said they would
 * use it have not begun (a filtered run may never begin them), the browser
 * waits this long for one before closing. Only a bound, not a pause: the next
 * file of a bundle begins at once and takes the browser over.
 */
const IDLE_CLOSE_MS = 2000;

let launching: Promise<Browser> | null = null;
/** Files that called useChromium in this process, files holding the browser now, and files that have ended. */
let declared = 0;
let holding = 0;
let ended = 0;
let idleClose: NodeJS.Timeout | null = null;

const EXIT_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

function exitOnSignal(signal: NodeJS.Signals): void {
  process.exit(128 + (os.constants.signals[signal] ?? 0));
}

function launch(): Promise<Browser> {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: install Debian's chromium package (.ci/run does)`);
  for (const signal of EXIT_SIGNALS) if (!process.listeners(signal).includes(exitOnSignal)) process.on(signal, exitOnSignal);
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS, handleSIGINT: false, handleSIGTERM: false, handleSIGHUP: false });
}

async function take(): Promise<Browser> {
  if (idleClose !== null) clearTimeout(idleClose);
  idleClose = null;
  holding++;
  try {
    launching ??= launch();
    const browser = await launching;
    if (browser.isConnected()) return browser;
    // Gone since the last file (crashed, or killed from outside): another.
    launching = launch();
    return await launching;
  } catch (error) {
    launching = null;
    holding--;
    throw error;
  }
}

/** A file has ended (`held`: having taken the browser): close it once no file holds it and none is still to come. */
function fileEnded(held: boolean): void {
  if (held) holding--;
  ended++;
  if (holding > 0 || launching === null) return;
  if (ended >= declared && filesStillToRun() === 0) void closeBrowser();
  else idleClose ??= setTimeout(() => void closeBrowser(), IDLE_CLOSE_MS);
}

async function closeBrowser(): Promise<void> {
  if (idleClose !== null) clearTimeout(idleClose);
  idleClose = null;
  const closing = launching;
  launching = null;
  await (await closing?.catch(() => null))?.close();
  if (launching === null) for (const signal of EXIT_SIGNALS) process.off(signal, exitOnSignal);
}

export interface FileBrowser {
  /** A context of this file's, en-US and UTC unless `options` say otherwise; closed when the file ends. */
  newContext(options?: BrowserContextOptions): Promise<BrowserContext>;
}

/**
 * Call at a test file's top level, before the file's own hooks. The file
 * takes the browser as it begins, launching it if it is the first, without
 * waiting for it there: the launch goes on while the file's own before hooks
 * start its servers. It gives the browser back, its contexts closed, in an
 * after hook.
 */
export function useChromium(): FileBrowser {
  declared++;
  let taken: Promise<Browser> | null = null;
  const contexts = new Set<BrowserContext>();
  const browser = (): Promise<Browser> => (taken ??= take());
  before(() => {
    // A failed launch is reported where the browser is first awaited (newContext).
    browser().catch(() => undefined);
  });
  after(async () => {
    const held = taken === null ? false : await taken.then(() => true, () => false);
    try {
      await Promise.all([...contexts].map((context) => context.close()));
    } finally {
      contexts.clear();
      taken = null;
      fileEnded(held);
    }
  });
  return {
    newContext: async (options = {}) => {
      const context = await (await browser()).newContext({ ...CONTEXT_DEFAULTS, ...options });
      contexts.add(context);
      context.once('close', () => contexts.delete(context));
      return context;
    },
  };
}
