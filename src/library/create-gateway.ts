// The embedded gateway (src/api/gateway.ts): what a host gets from
// createGateway, and what `portcullis serve` builds on. From a config value it
// opens what the config names (the state backend, the audit chain, the
// response store), builds the gateway, and owns their life: listen, reload,
// close. It adds no process listener (signals are the host's) and starts
// nothing beyond what the config needs (the key store's watch, the usage
// flush), all of it ended by close().
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { DrainReport, Gateway, GatewayOptions, ListenOptions, ListeningAddress, ReloadResult, RequestHandler } from '../api/gateway.ts';
import { createAdminServer, type AdminServer } from '../admin/admin-server.ts';
import { ConfigError, type GatewayConfig } from '../config/config.ts';
import { parseConfig } from '../config/config-parser.ts';
import type { ConfigIssue as InternalConfigIssue } from '../config/config-issues.ts';
import type { ConfigIssue } from '../api/config.ts';
import { adminHostNames } from '../config/operations-config.ts';
import { loadListenerTls, type ListenerTlsMaterial } from '../config/tls-files.ts';
import { healthRoutes } from '../gateway/health.ts';
import { trustedProxies } from '../http/client-address.ts';
import { batchLines, createLogger, type BatchedLines, type Logger } from '../log/logger.ts';
import { connectionsForDescriptors, readDescriptorLimit } from '../ops/descriptor-watch.ts';
import { listenOn } from '../ops/listen.ts';
import type { StateBackend } from '../state/state-backend.ts';
import { checkConfig, GatewayConfigError } from './check-config.ts';
import { checkProviderTypes } from './provider-registry.ts';
import { describeStartError, GatewayStartError, openGatewayParts, type GatewayParts } from './gateway-parts.ts';
import { createReloadSequence } from './reload-sequence.ts';
import type { Gateway as InternalGateway } from '../gateway/gateway.ts';
import type { AuditTrail } from '../audit/audit-event.ts';

/** After the API drained: how long admin requests still open (a page load) get. */
const ADMIN_CLOSE_MS = 2000;

/**
 * A host's config has no file: the file paths it names (apiKeyFile,
 * certificates) resolve against baseDir as if it were a file there, as
 * checkConfig judges them. The name shows in log lines as the config's source.
 */
const SOURCE_IN_BASE_DIR = 'gateway-options.config';

/** The issues as plain data a host can keep (no class, no getters). */
function plainIssues(issues: readonly InternalConfigIssue[]): ConfigIssue[] {
  return issues.map((i) => ({ code: i.code, path: i.path, message: i.message }));
}

/** Why a basePath cannot be used, or null. */
function basePathProblem(basePath: string): string | null {
  if (basePath === '') return null;
  if (!basePath.startsWith('/')) return `basePath must start with "/" (got ${JSON.stringify(basePath)})`;
  if (basePath.endsWith('/')) return `basePath must not end with "/" (got ${JSON.stringify(basePath)}); "" serves at the root`;
  if (/[?#]/.test(basePath)) return `basePath must be a path without "?" or "#" (got ${JSON.stringify(basePath)})`;
  return null;
}

/** What a taken or forbidden address names: the listener, and the settings that move it for a host. */
const API_LISTENER = { name: 'the API listener', settings: "listen.port or listen()'s port" };
const ADMIN_LISTENER = { name: 'the admin listener', settings: "admin.port or listen()'s adminPort, or listen({admin: false})" };

/** Who a reload() is, in its audit record. */
const LIBRARY_ACTOR = { kind: 'system', id: 'library' } as const;

/** The embedded gateway of `options` (src/api/gateway.ts); rejects with GatewayConfigError for a config that cannot run. */
export async function createGateway(options: GatewayOptions): Promise<Gateway> {
  const basePath = options.basePath ?? '';
  const baseProblem = basePathProblem(basePath);
  if (baseProblem !== null) throw new TypeError(baseProblem);
  const env = options.env ?? process.env;
  const baseDir = path.resolve(options.baseDir ?? process.cwd());
  const source = path.join(baseDir, SOURCE_IN_BASE_DIR);
  // Malformed registrations throw here, naming the adapter, before the config is looked at.
  const providerTypes = checkProviderTypes(options.providerTypes);
  const parse = (value: unknown): GatewayConfig => parseConfig(value, source, baseDir, { providerTypes });

  // Every problem at once, missing upstream keys included (what reload() and serve would refuse).
  const issues = checkConfig(options.config, { baseDir, env, providerTypes, ...(options.providerKey === undefined ? {} : { providerKey: options.providerKey }) });
  if (issues.length > 0) throw new GatewayConfigError(issues);
  let loaded: GatewayConfig;
  let tls: ListenerTlsMaterial | undefined;
  try {
    loaded = parse(options.config);
    tls = loaded.listen.tls === null ? undefined : loadListenerTls(source, 'listen.tls', loaded.listen.tls, env);
  } catch (err) {
    if (err instanceof ConfigError) throw new GatewayConfigError(plainIssues(err.issues));
    throw err;
  }
  // Unset, limits.maxConnections is what the descriptor limit allows, as for serve.
  const maxConnections = loaded.limits.maxConnections ?? connectionsForDescriptors(readDescriptorLimit());
  const config: GatewayConfig = { ...loaded, limits: { ...loaded.limits, maxConnections } };

  let lines: BatchedLines | null = null;
  let logger: Logger;
  if (options.logger === undefined) {
    lines = batchLines((text) => process.stdout.write(text), { flushOnExit: false });
    logger = createLogger({ level: config.log.level, write: lines });
  } else logger = options.logger;

  let parts: GatewayParts;
  try {
    parts = await openGatewayParts({
      config,
      logger,
      env,
      basePath,
      ...(tls === undefined ? {} : { tls }),
      ports: { keys: options.keys, usage: options.usage, limiter: options.limiter },
      ...(options.audit === undefined ? {} : { auditSink: options.audit }),
      ...(options.authenticate === undefined ? {} : { authenticate: options.authenticate }),
      ...(options.providerKey === undefined ? {} : { providerKey: options.providerKey }),
      ...(options.traceExporter === undefined ? {} : { traceExporter: options.traceExporter }),
    });
  } catch (err) {
    lines?.flush();
    if (!(err instanceof GatewayStartError)) throw err;
    const cause = err.cause as Error;
    if (err.step === 'config' && cause instanceof ConfigError) throw new GatewayConfigError(plainIssues(cause.issues));
    throw new Error(describeStartError(err, config), { cause });
  }
  const { backend, audit, gateway: internal } = parts;
  return embeddedGateway({ internal, backend, audit, logger, lines, loaded, config, parse, env });
}

interface Parts {
  internal: InternalGateway;
  backend: StateBackend;
  audit: AuditTrail;
  logger: Logger;
  /** The stdout sink of a logger made here, flushed by close(). */
  lines: BatchedLines | null;
  loaded: GatewayConfig;
  config: GatewayConfig;
  parse: (value: unknown) => GatewayConfig;
  env: NodeJS.ProcessEnv;
}

function embeddedGateway(parts: Parts): Gateway {
  const { internal, backend, audit, logger, config, env } = parts;
  let adminServer: AdminServer | null = null;
  let closing: Promise<DrainReport> | null = null;
  const reloads = createReloadSequence({
    gateway: internal,
    keys: backend.keys,
    logger,
    audit,
    actor: LIBRARY_ACTOR,
    origin: 'reload()',
    target: () => 'embedded',
    loaded: parts.loaded,
    stopping: () => closing !== null,
  });

  const makeAdmin = (apiAddress: () => string): AdminServer =>
    createAdminServer({
      view: () => ({ config: internal.config, targets: internal.targets }),
      state: backend,
      audit,
      clock: Date.now,
      apiAddress,
      dataDir: config.dataDir,
      limits: config.limits,
      trustedProxies: trustedProxies(config.listen.trustedProxies),
      logger,
      // A host sets the admin password with `portcullis admin set-password` (no one-time token to show).
      bootstrap: null,
      session: { ttlMs: config.admin.sessionTtlMs, idleMs: config.admin.sessionIdleMs, secureCookies: config.admin.secureCookies },
      allowedHosts: adminHostNames(config.admin),
      extraRoutes: [...healthRoutes({ targets: () => internal.targets.health(), state: backend, draining: () => internal.draining, failureDetail: true })],
      env,
    });

  let apiUrl = '';
  let listening = false;
  const handle: RequestHandler = (req, res, next) => internal.handle(req, res, next);

  async function listen(options: ListenOptions = {}): Promise<ListeningAddress> {
    if (closing !== null) throw new Error('listen() after close(): make a new gateway');
    if (listening) throw new Error('listen() was called already: a gateway has one API listener (serve more addresses from your own server with handle())');
    listening = true;
    let url: string;
    try {
      url = await listenOn(internal.server, options.fd, options.port ?? config.listen.port, options.host ?? config.listen.host, API_LISTENER);
    } catch (err) {
      // A taken port: the host may try another.
      listening = false;
      throw err;
    }
    const address = internal.server.address();
    const bound = typeof address === 'object' && address !== null ? (address as AddressInfo) : null;
    apiUrl = url;
    let admin: { url: string } | null = null;
    if (options.admin ?? config.admin.enabled) {
      adminServer ??= makeAdmin(() => apiUrl);
      admin = { url: await listenOn(adminServer.server, options.adminFd, options.adminPort ?? config.admin.port, config.admin.host, ADMIN_LISTENER) };
    }
    return { host: bound?.address ?? (options.host ?? config.listen.host), port: bound?.port ?? 0, url, admin };
  }

  async function reload(value: unknown): Promise<ReloadResult> {
    const outcome = await reloads.run({ load: () => parts.parse(value) });
    return outcome.ok ? { ok: true, aliases: outcome.aliases, restartNeeded: outcome.restartNeeded } : { ok: false, issues: plainIssues(outcome.issues) };
  }

  function close(options: { drainTimeoutMs?: number } = {}): Promise<DrainReport> {
    closing ??= (async () => {
      const report = await internal.shutdown(options.drainTimeoutMs ?? internal.config.shutdown.drainTimeoutMs);
      if (adminServer !== null) {
        await adminServer.shell.drain(ADMIN_CLOSE_MS);
        await adminServer.tokenUses.close();
      }
      await backend.close();
      parts.lines?.flush();
      return { finished: report.finished, endedWithError: report.endedWithError, refused: report.refused };
    })();
    return closing;
  }

  return {
    handle,
    admin() {
      if (closing !== null) throw new Error('admin() after close(): make a new gateway');
      adminServer ??= makeAdmin(() => apiUrl);
      const shell = adminServer.shell;
      // The admin routes own every path they are mounted at (the dashboard answers the rest): next is not called.
      return (req, res) => shell.handle(req, res, req.url ?? '/');
    },
    listen,
    reload,
    close,
    closeNow() {
      internal.endShutdownNow();
      adminServer?.shell.endDrainNow();
    },
    get draining() {
      return internal.draining;
    },
    get inFlight() {
      return internal.inFlight;
    },
  };
}
