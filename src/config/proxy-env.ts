// Which egress proxy, if any, carries the requests to one upstream: the
// provider's "proxy" setting, else the environment read as curl reads it
// (https://curl.se/libcurl/c/libcurl-env.html, lib/url.c detect_proxy):
//   - an https:// upstream: https_proxy, else HTTPS_PROXY;
//   - an http:// upstream: http_proxy only. curl never reads upper-case
//     HTTP_PROXY: a CGI server turns a request's "Proxy:" header into the
//     HTTP_PROXY variable ("httpoxy"), so a client could pick the proxy.
//     We do the same, and say so in the start log when HTTP_PROXY is set;
//   - neither: all_proxy, else ALL_PROXY;
//   - the lower-case name wins when both are set; an empty variable counts as
//     unset (curl_getenv);
//   - no_proxy, else NO_PROXY, exempts hosts (./no-proxy.ts), checked first,
//     as curl does: an exempt upstream never looks at the proxy variable.
// A proxy value without "scheme://" is http://; without a port, the port is
// 1080, curl's default for every non-TLS proxy (CURLOPT_PROXYPORT). Only
// http:// proxies are supported: an https:// or socks proxy is refused at
// start naming the variable, never ignored. user:password@ in the value
// (percent-decoded) becomes the Proxy-Authorization; it appears in no
// description, message or log line. A proxy in the provider's "proxy"
// setting is always used (NO_PROXY does not apply to it) and holds no credentials.

import { ConfigError } from './config.ts';
import { noProxyMatch, parseNoProxy } from './no-proxy.ts';

/** How one upstream is reached through a proxy. */
export interface ProxyRoute {
  /** http://host:port of the proxy, without credentials or path. */
  readonly url: URL;
  /** The Proxy-Authorization value ("Basic ..."), or undefined. A secret. */
  readonly authorization: string | undefined;
  /** Where the proxy came from: 'config', 'https_proxy', 'HTTPS_PROXY', 'http_proxy', 'all_proxy' or 'ALL_PROXY'. */
  readonly source: string;
}

export interface ProxyResolution {
  /** null: the upstream is reached directly. */
  readonly route: ProxyRoute | null;
  /** One line for the start log, without credentials: "proxy http://p:3128 (HTTPS_PROXY, with credentials)". */
  readonly description: string;
  /** What the log should also say: a variable curl ignores, NO_PROXY entries that never match. */
  readonly notes: readonly string[];
  /** A proxy variable applied, but NO_PROXY exempts the upstream. */
  readonly exempted: boolean;
}

export type ProxyEnvironment = Readonly<Record<string, string | undefined>>;

/** The port curl uses for an http:// proxy named without one. */
export const DEFAULT_PROXY_PORT = 1080;
/** Where a ConfigError about a proxy variable says the problem is. */
const ENV_SOURCE = 'environment';

/**
 * The proxy route for `target` (the upstream's base URL), given the process
 * environment and the provider's `proxy` setting (null: follow the
 * environment; "none"; or an http:// URL). Throws a ConfigError naming the
 * variable when the proxy variable that applies is not a usable http:// proxy.
 */
export function resolveProxy(target: URL, env: ProxyEnvironment, setting: string | null): ProxyResolution {
  if (setting === 'none') return direct('direct ("proxy": "none")');
  if (setting !== null) {
    const route = parseProxyUrl(setting, 'config');
    return { route, description: `proxy ${origin(route.url)} (the provider's "proxy" setting)`, notes: [], exempted: false };
  }
  const https = target.protocol === 'https:';
  const notes: string[] = [];
  if (!https && read(env, 'http_proxy') === undefined && read(env, 'HTTP_PROXY') !== undefined) {
    notes.push('HTTP_PROXY is ignored for http:// upstreams, as curl does (a CGI server sets it from a request\'s "Proxy:" header); set http_proxy instead');
  }
  const candidates = https ? ['https_proxy', 'HTTPS_PROXY', 'all_proxy', 'ALL_PROXY'] : ['http_proxy', 'all_proxy', 'ALL_PROXY'];
  const name = candidates.find((n) => read(env, n) !== undefined);
  if (name === undefined) return { route: null, description: `direct (no ${candidates.join(', ')} set)`, notes, exempted: false };

  const noProxyName = read(env, 'no_proxy') !== undefined ? 'no_proxy' : 'NO_PROXY';
  const noProxy = read(env, noProxyName);
  if (noProxy !== undefined) {
    const list = parseNoProxy(noProxy);
    for (const { entry, reason } of list.ignored) notes.push(`${noProxyName} entry "${entry}" never matches: ${reason}`);
    const match = noProxyMatch(list, target.hostname);
    if (match !== undefined) return { route: null, description: `direct (${noProxyName} matches "${match}")`, notes, exempted: true };
  }
  const route = parseProxyUrl(read(env, name) as string, name);
  const credentials = route.authorization === undefined ? '' : ', with credentials';
  return { route, description: `proxy ${origin(route.url)} (${name}${credentials})`, notes, exempted: false };
}

function direct(description: string): ProxyResolution {
  return { route: null, description, notes: [], exempted: false };
}

function read(env: ProxyEnvironment, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

/** http://host[:port] as the log shows it. */
function origin(url: URL): string {
  return `${url.protocol}//${url.host}`;
}

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;
const SOCKS = new Set(['socks4', 'socks4a', 'socks5', 'socks5h']);
const EXPLICIT_PORT = /:\d+$/;

/**
 * A proxy URL from `source` ('config' or a variable's name) as a route. The
 * value may hold credentials, so no message repeats it: they name the
 * variable and the part that is wrong.
 */
export function parseProxyUrl(value: string, source: string): ProxyRoute {
  const problem = (message: string): ConfigError =>
    source === 'config' ? new ConfigError(null, 'proxy', message) : new ConfigError(ENV_SOURCE, source, message);
  const text = value.trim();
  const scheme = SCHEME.exec(text)?.[1]?.toLowerCase();
  if (scheme === 'https') {
    return fail(problem('is an https:// proxy (TLS to the proxy itself), which Portcullis does not support: give the proxy\'s http:// address; an https:// upstream stays encrypted end to end inside the CONNECT tunnel'));
  }
  if (scheme !== undefined && SOCKS.has(scheme)) return fail(problem(`is a ${scheme}:// proxy; Portcullis supports http:// proxies only (HTTP CONNECT)`));
  if (scheme !== undefined && scheme !== 'http') return fail(problem(`has the scheme "${scheme}://"; Portcullis supports http:// proxies only`));
  const withScheme = scheme === undefined ? `http://${text}` : text;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return fail(problem('is not a proxy URL; expected http://host:port (optionally http://user:password@host:port)'));
  }
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '') {
    return fail(problem('must be just http://host:port, without a path, query or fragment'));
  }
  const authorization = url.username === '' && url.password === '' ? undefined : basicAuthorization(url, problem);
  // URL drops a port equal to the scheme's default (":80"); look at the text
  // to tell "host:80" (port 80) from "host" (curl's 1080).
  const authority = withScheme.slice(withScheme.indexOf('//') + 2).split(/[/?#]/, 1)[0] ?? '';
  const hostPort = authority.slice(authority.lastIndexOf('@') + 1);
  const clean = new URL(`http://${url.host}`);
  if (!EXPLICIT_PORT.test(hostPort)) clean.port = String(DEFAULT_PROXY_PORT);
  return { url: clean, authorization, source };
}

/** user:password from the URL (percent-decoded, UTF-8) as a Basic credential (RFC 7617). */
function basicAuthorization(url: URL, problem: (message: string) => ConfigError): string {
  let user: string;
  let password: string;
  try {
    user = decodeURIComponent(url.username);
    password = decodeURIComponent(url.password);
  } catch {
    return fail(problem('has credentials that are not valid percent-encoding: write a "%" in the user or password as %25'));
  }
  return proxyAuthorization(user, password);
}

/** The Proxy-Authorization value for a user and password. */
export function proxyAuthorization(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
}

function fail(error: ConfigError): never {
  throw error;
}
