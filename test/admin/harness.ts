// Harness for browser tests: the real gateway (API listener) and the real
// admin server (dashboard and admin API) on 127.0.0.1 port 0, wired as
// `portcullis serve` wires them: one memory state backend in a temp data
// directory (its audit chain behind the admin server's trail), the embedded
// demo setup (service-chat), a fresh bootstrap token, and the built
// dashboard. Nothing leaves loopback.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { listenLocal } from '../gateway/harness.ts';
import { createAdminServer, defaultDashboardDir } from '../../src/admin/admin-server.ts';
import { createBootstrapToken } from '../../src/admin/bootstrap-token.ts';
import { createAuditTrail } from '../../src/audit/audit-trail.ts';
import { embeddedConfigValue } from '../../src/config/config-loader.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { createGateway } from '../../src/gateway/gateway.ts';
import { createLogger } from '../../src/log/logger.ts';
import { openFileBackend } from '../../src/state/file-backend.ts';
import { freshDir, memoryTempDir } from '../support/temp-dir.ts';

/** Log lines kept for a failing test's diagnostics; older ones are dropped. */
const MAX_LOG_LINES = 2000;

export interface AdminGateway {
  /** The API listener, e.g. http://127.0.0.1:41234 (the OpenAI base URL is apiUrl + '/v1'). */
  apiUrl: string;
  /** The admin listener: the dashboard at adminUrl + '/'. */
  adminUrl: string;
  /** The one-time token that signs in while no admin password is set. */
  bootstrapToken: string;
  /** The data directory both listeners share (keys.json, audit.jsonl). */
  dataDir: string;
  /** Both listeners' log lines, newest last (bounded). */
  logs: Record<string, unknown>[];
  /**
   * Resolves once every API request so far has closed (a request records its
   * usage as it closes, which may be after its client has the answer) and the
   * usage is flushed to the state backend: the usage view then shows it all.
   */
  usageSettled(): Promise<void>;
  /**
   * Does from Node what a first visit to the dashboard does: signs in with
   * the bootstrap token and sets `password`. Returns the password session's
   * cookie, for a browser that should start signed in, and its CSRF token.
   */
  signInSettingPassword(password: string): Promise<{ name: string; value: string; csrfToken: string }>;
  close(): Promise<void>;
}

/**
 * The built dashboard. Compiled (dist/test/admin/harness.js) it sits where
 * the server looks by default (dist/dashboard, beside dist/src); under tsx
 * (test/admin/harness.ts) the default would point into the sources' parent,
 * so the repository's dist/dashboard is used instead.
 */
export function builtDashboardDir(): string {
  const here = fileURLToPath(import.meta.url);
  const dir = here.endsWith('.js') ? defaultDashboardDir() : path.resolve(path.dirname(here), '../../dist/dashboard');
  for (const file of ['index.html', 'app.js', 'app.css']) {
    if (!existsSync(path.join(dir, file))) {
      throw new Error(`the dashboard is not built: ${path.join(dir, file)} is missing (run npm run build)`);
    }
  }
  return dir;
}

/** Where the gateways of this process keep their data directories (removed at exit). */
let dataRoot: string | undefined;

export interface AdminGatewayOptions {
  /** Top-level config settings laid over the embedded demo config (e.g. `aliases` with prices). */
  config?: Record<string, unknown>;
}

export async function startAdminGateway(options: AdminGatewayOptions = {}): Promise<AdminGateway> {
  const dashboardDir = builtDashboardDir();
  const dataDir = freshDir(dataRoot ??= memoryTempDir('admin-it'));
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger({
    level: 'info',
    write: (text) => {
      for (const line of text.split('\n')) {
        if (line === '') continue;
        logs.push(JSON.parse(line) as Record<string, unknown>);
        if (logs.length > MAX_LOG_LINES) logs.shift();
      }
    },
  });
  const config = parseConfig({ ...(embeddedConfigValue() as Record<string, unknown>), ...options.config, dataDir }, null, dataDir);
  // One backend for both listeners, as in `serve`: a key the dashboard creates is live on the API at once.
  const state = openFileBackend(dataDir, { watch: false });
  const gateway = createGateway({ config, state, logger, env: {} });
  let openRequests = 0;
  let allClosed: Array<() => void> = [];
  gateway.server.on('request', (_req, res) => {
    openRequests++;
    // The gateway's own close hooks (usage recorded) run in this same 'close' emit.
    res.once('close', () => {
      if (--openRequests > 0) return;
      for (const resolve of allClosed) resolve();
      allClosed = [];
    });
  });
  const usageSettled = async (): Promise<void> => {
    if (openRequests > 0) await new Promise<void>((resolve) => allClosed.push(resolve));
    await gateway.flushUsage();
  };
  const bootstrap = createBootstrapToken();
  const admin = createAdminServer({
    view: () => ({ config: gateway.config, targets: gateway.targets }),
    state,
    // As serve: each event appended to the data directory's hash chain (GET /api/audit reads it), then logged.
    audit: createAuditTrail({ logger, log: state.audit }),
    clock: Date.now,
    apiAddress: () => apiUrl || null,
    dataDir,
    limits: config.limits,
    logger,
    bootstrap,
    session: { ttlMs: config.admin.sessionTtlMs, idleMs: config.admin.sessionIdleMs, secureCookies: false },
    dashboardDir,
  });

  let apiUrl = '';
  let adminUrl = '';
  const close = async (): Promise<void> => {
    gateway.server.closeAllConnections();
    await gateway.close();
    admin.server.closeAllConnections();
    if (admin.server.listening) await new Promise<void>((resolve) => admin.server.close(() => resolve()));
    await admin.tokenUses.close();
    await state.close();
  };
  try {
    const api = await listenLocal(gateway);
    apiUrl = `http://127.0.0.1:${api.port}`;
    adminUrl = `http://127.0.0.1:${(await listen(admin.server)).port}`;
  } catch (err) {
    await close();
    throw err;
  }
  const signInSettingPassword = async (password: string): Promise<{ name: string; value: string; csrfToken: string }> => {
    const post = (route: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${adminUrl}${route}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    const login = await post('/api/login', { password: bootstrap.token });
    assert.equal(login.status, 200, 'the bootstrap token signs in');
    const { csrfToken } = (await login.json()) as { csrfToken: string };
    const set = await post('/api/password', { password }, { cookie: sessionCookieOf(login), 'x-csrf-token': csrfToken });
    assert.equal(set.status, 200, 'the password is set');
    const session = (await set.json()) as { csrfToken: string };
    const cookie = sessionCookieOf(set);
    const equals = cookie.indexOf('=');
    return { name: cookie.slice(0, equals), value: cookie.slice(equals + 1), csrfToken: session.csrfToken };
  };
  return { apiUrl, adminUrl, bootstrapToken: bootstrap.token, dataDir, logs, usageSettled, signInSettingPassword, close };
}

/** `name=value` of the session cookie an answer sets. */
function sessionCookieOf(answer: Response): string {
  const cookie = answer.headers.getSetCookie()[0]?.split(';')[0];
  assert.ok(cookie !== undefined, 'the answer sets the session cookie');
  return cookie;
}

function listen(server: Server): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}
