// How each HTTP provider reaches its upstream, decided whole when the serving
// state is built (start and every reload): the transport, the TLS material
// (providers.*.tls, read from its files) and the egress proxy (the provider's
// "proxy" setting, else the environment read as curl reads it,
// ../config/proxy-env.ts). The rule for the transport:
//   - "transport": "node": node:http, through the proxy if one applies;
//   - not set: the built-in fetch, unless a proxy from the environment applies
//     to this upstream: fetch cannot use one on any supported Node line, so
//     that provider uses node (said in the start log);
//   - "transport": "fetch" with a proxy from the environment that applies: a
//     ConfigError naming both, rather than silently going direct.
// Every problem of every provider is collected into one ConfigError.
import { ConfigError, type GatewayConfig, type UpstreamTransportName } from '../config/config.ts';
import type { ConfigIssue } from '../config/config-issues.ts';
import { resolveProxy, type ProxyResolution } from '../config/proxy-env.ts';
import { loadClientTls, type ClientTlsMaterial } from '../config/tls-files.ts';

/** The source ../config/proxy-env.ts gives a ConfigError about a proxy variable. */
const ENVIRONMENT = 'environment';
/** Node 22.21+ / 24.5+: when set, the built-in fetch uses the proxy variables on its own. */
const NODE_ENV_PROXY = 'NODE_USE_ENV_PROXY';

export interface ProviderConnection {
  transport: UpstreamTransportName;
  /** True when the transport is node only because an environment proxy applies. */
  transportForProxy: boolean;
  tls: ClientTlsMaterial | undefined;
  proxy: ProxyResolution;
}

/**
 * The connection of every HTTP provider of `config` (the demo provider has
 * none). Throws one ConfigError listing every TLS file, proxy variable and
 * transport problem.
 */
export function resolveProviderConnections(config: GatewayConfig, env: NodeJS.ProcessEnv): Map<string, ProviderConnection> {
  const { connections, issues } = resolve(config, env, true);
  if (issues.length > 0) throw new ConfigError(config.source, issues);
  return connections;
}

/** The proxy and transport problems alone (no TLS file is read), for check-config. */
export function proxyIssues(config: GatewayConfig, env: NodeJS.ProcessEnv): ConfigIssue[] {
  return resolve(config, env, false).issues;
}

function resolve(config: GatewayConfig, env: NodeJS.ProcessEnv, readTls: boolean, execArgv: readonly string[] = process.execArgv): { connections: Map<string, ProviderConnection>; issues: ConfigIssue[] } {
  const connections = new Map<string, ProviderConnection>();
  const issues: ConfigIssue[] = [];
  const collect = (err: unknown): void => {
    if (!(err instanceof ConfigError)) throw err;
    // A proxy variable's problem is the environment's, not a setting of the file.
    const where = err.source === ENVIRONMENT ? (path: string) => `${path} (environment variable)` : (path: string) => path;
    for (const issue of err.issues) {
      const path = where(issue.path);
      // One bad variable is one problem, however many providers it applies to.
      if (!issues.some((seen) => seen.path === path && seen.message === issue.message)) issues.push({ ...issue, path });
    }
  };
  for (const [name, provider] of Object.entries(config.providers)) {
    if (provider.type === 'demo') continue;
    let tls: ClientTlsMaterial | undefined;
    try {
      if (readTls && provider.tls !== null) tls = loadClientTls(config.source, `providers.${name}.tls`, provider.tls, env);
    } catch (err) {
      collect(err);
    }
    let proxy: ProxyResolution;
    try {
      proxy = resolveProxy(new URL(provider.baseUrl), env, provider.proxy);
    } catch (err) {
      collect(err);
      continue;
    }
    const fromEnvironment = proxy.route !== null && provider.proxy === null;
    if (provider.transport === 'fetch' && fromEnvironment) {
      issues.push({
        code: 'conflict',
        path: `providers.${name}.transport`,
        message: `is "fetch", but an egress proxy applies to this upstream (${proxy.description}) and the built-in fetch cannot use one: set "proxy": "none" to connect directly, or "transport": "node" to go through the proxy`,
      });
      continue;
    }
    const transport = provider.transport ?? (fromEnvironment ? 'node' : 'fetch');
    connections.set(name, { transport, transportForProxy: provider.transport === null && transport === 'node', tls, proxy });
  }
  const users = defaultClientUsers(config, connections);
  if (users.length > 0) issues.push(...fetchOverrides(env, execArgv, users));
  return { connections, issues };
}

/**
 * What reaches its server through Node's own HTTP clients, the built-in fetch
 * or node:http's default agent, whose behaviour process-wide switches change:
 * providers on the fetch transport, the OIDC issuer (fetch) and the OTLP
 * collector (node:http's default agent). The node transport sets its own
 * agent and options and is not affected.
 */
function defaultClientUsers(config: GatewayConfig, connections: ReadonlyMap<string, ProviderConnection>): string[] {
  const users = [...connections].filter(([, c]) => c.transport === 'fetch').map(([name]) => `providers.${name} (the fetch transport)`);
  if (config.admin.oidc !== null) users.push('admin.oidc (the issuer)');
  if (config.telemetry.otlp !== null) users.push('telemetry.otlp (the collector)');
  return users;
}

/**
 * Process-wide switches that change Node's own HTTP clients behind the
 * gateway's back, refused while anything uses them (defaultClientUsers):
 * Node's own proxy handling (NODE_USE_ENV_PROXY, --use-env-proxy), which
 * bypasses "proxy": "none" and curl's NO_PROXY rules, sends the issuer's and
 * the collector's requests through the proxy, and on Node 22 and 24 retries
 * a refused CONNECT in a tight loop; and NODE_TLS_REJECT_UNAUTHORIZED=0,
 * which turns off certificate checks.
 */
function fetchOverrides(env: NodeJS.ProcessEnv, execArgv: readonly string[], users: readonly string[]): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const affected = `affects ${users.join(', ')}`;
  const flags = [...execArgv, ...(env['NODE_OPTIONS'] ?? '').split(/\s+/)];
  const envProxy = env[NODE_ENV_PROXY];
  const proxyBy =
    envProxy !== undefined && envProxy !== '' && envProxy !== '0' ? `${NODE_ENV_PROXY} (environment variable)` : flags.some((f) => f === '--use-env-proxy') ? '--use-env-proxy (node option)' : undefined;
  if (proxyBy !== undefined) {
    issues.push({
      code: 'conflict',
      path: proxyBy,
      message:
        `makes Node's built-in fetch and node:http's default agent apply the proxy variables by themselves, process-wide, around the gateway's own rules ("proxy": "none", NO_PROXY as curl reads it; on Node 22 and 24 it also retries a refused CONNECT in a tight loop; ${affected}): remove it; the gateway applies HTTPS_PROXY, http_proxy and NO_PROXY itself`,
    });
  }
  if (env['NODE_TLS_REJECT_UNAUTHORIZED'] === '0') {
    issues.push({
      code: 'conflict',
      path: 'NODE_TLS_REJECT_UNAUTHORIZED (environment variable)',
      message:
        `is "0", which turns off certificate checks for the built-in fetch and node:http's default agent (${affected}): any server could pose as the upstream, the issuer or the collector and read what is sent to it. Unset it; for a private CA give a provider "transport": "node" and "tls": {"caFile": ...}, and start node with NODE_EXTRA_CA_CERTS for the issuer and the collector`,
    });
  }
  return issues;
}

/** Whether the start log should say how this provider connects: a proxy, a NO_PROXY exemption, a note, or a transport chosen for the proxy. */
export function connectionWorthLogging(connection: ProviderConnection): boolean {
  return connection.proxy.route !== null || connection.proxy.notes.length > 0 || connection.proxy.exempted;
}
