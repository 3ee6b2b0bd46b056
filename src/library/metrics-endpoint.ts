// The gateway's metrics listener (config `metrics`): its token file and TLS
// files read when listen() starts it, the listener bound, and closed after the
// API drained (so the last scrape sees the drain); and /metrics on the admin
// listener.
import { readFileSync, statSync } from 'node:fs';
import type { Server } from 'node:http';
import { ConfigError, type GatewayConfig } from '../config/config.ts';
import { metricsToken } from '../config/metrics-config.ts';
import { loadListenerTls } from '../config/tls-files.ts';
import type { RouteHandler } from '../http/request-context.ts';
import type { GatewayMetrics } from '../metrics/gateway-metrics.ts';
import { createMetricsListener, type MetricsListenerOptions } from '../metrics/metrics-listener.ts';
import { PROMETHEUS_CONTENT_TYPE } from '../metrics/registry.ts';
import { listenOn, type Listener } from '../ops/listen.ts';

const METRICS_LISTENER: Listener = { id: 'metrics', name: 'the metrics listener', settings: 'metrics.port (0 picks a free port)' };

/** The running listener, or null when `metrics` is not configured. Throws ConfigError for an unusable token or TLS file, Error when it cannot listen. */
export async function startMetricsListener(
  config: GatewayConfig,
  env: NodeJS.ProcessEnv,
  expose: () => string,
  guard: Pick<MetricsListenerOptions, 'logger' | 'onConnectionRefused' | 'onConnectionReclaimed'>,
): Promise<{ server: Server; address: string } | null> {
  const settings = config.metrics;
  if (settings === null) return null;
  const token = settings.tokenFile === null ? null : readToken(config.source, settings.tokenFile);
  const tls = settings.tls === null ? undefined : loadListenerTls(config.source, 'metrics.tls', settings.tls, env);
  const server = createMetricsListener({ expose, token, ...guard, ...(tls === undefined ? {} : { tls }) });
  try {
    return { server, address: await listenOn(server, undefined, settings.port, settings.host, METRICS_LISTENER) };
  } catch (error) {
    server.close();
    throw error;
  }
}

export async function closeMetricsListener(listener: { server: Server } | null): Promise<void> {
  if (listener === null) return;
  listener.server.closeAllConnections();
  await new Promise<void>((resolve) => listener.server.close(() => resolve()));
}

function readToken(source: string | null, file: string): string {
  let text: string;
  try {
    if (statSync(file).size > 4096) throw new ConfigError(source, 'metrics.tokenFile', `${file} is larger than 4096 bytes; it must hold the token on one line`);
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError(source, 'metrics.tokenFile', `${file} ${code === 'ENOENT' ? 'does not exist' : code === 'EACCES' ? 'cannot be read (permission denied)' : `cannot be read (${code ?? 'error'})`}`);
  }
  const checked = metricsToken(text);
  if ('problem' in checked) throw new ConfigError(source, 'metrics.tokenFile', `${file} ${checked.problem}`);
  return checked.token;
}

/** GET /metrics on the admin listener: the exposition, never cached. */
export function metricsHandler(metrics: GatewayMetrics): RouteHandler {
  return async (ctx) => {
    const body = metrics.expose();
    ctx.res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
    ctx.res.end(ctx.req.method === 'HEAD' ? undefined : body);
  };
}
