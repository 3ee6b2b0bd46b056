// The "metrics" section: a listener of its own for Prometheus (docs/config.md,
// "Metrics listener"). Off unless the section is there. On a non-loopback
// address it needs a bearer token file: the metrics name aliases, keys' usage
// volumes and upstream health, nothing for anyone who can reach the port.
import path from 'node:path';
import type { ListenerTlsConfig } from './config.ts';
import type { Checker } from './config-checker.ts';
import { parseListenerTls } from './tls-config.ts';

export interface MetricsConfig {
  host: string;
  /** 0: any free port (tests). */
  port: number;
  tls: ListenerTlsConfig | null;
  /** Absolute path of the file holding the bearer token scrapes must send; null: none asked (loopback only). */
  tokenFile: string | null;
}

export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

export function parseMetrics(c: Checker, value: unknown, baseDir: string, taken: ReadonlyArray<{ setting: string; host: string; port: number }>): MetricsConfig | null {
  if (value === undefined) return null;
  const o = c.object(value, 'metrics', ['host', 'port', 'tls', 'tokenFile']);
  if (o === undefined) return null;
  const host = c.optional(o, 'host', 'metrics', '127.0.0.1', (v, at) => c.string(v, at));
  if (o['port'] === undefined) c.report('metrics.port', { code: 'required', hint: '(the port Prometheus scrapes, e.g. 9464)' });
  const port = c.int(o, 'port', 'metrics', 0, 0, 65535);
  const tls = o['tls'] === undefined ? null : (parseListenerTls(c, o['tls'], 'metrics.tls') ?? null);
  const file = c.optional(o, 'tokenFile', 'metrics', null, (v, at) => c.string(v, at));
  const tokenFile = file === null ? null : path.resolve(baseDir, file);
  if (tokenFile === null && !isLoopbackHost(host)) {
    c.report('metrics.tokenFile', {
      code: 'required',
      hint: `when metrics.host ("${host}") is not a loopback address: anyone who can reach the port could read the metrics. Put a token in a file (openssl rand -hex 32 > /etc/portcullis/metrics-token) and name it here`,
    });
  }
  for (const other of taken) {
    if (port !== 0 && other.port === port && (other.host === host || other.host === '0.0.0.0' || host === '0.0.0.0' || other.host === '::' || host === '::')) {
      c.report('metrics.port', { code: 'conflict', message: `must differ from ${other.setting}.port (${other.port}): the metrics listener is a separate socket` });
    }
  }
  return { host, port, tls, tokenFile };
}

/** Most bytes of a token file: one line. */
const MAX_TOKEN_FILE_BYTES = 4096;
/** Fewest characters of a token: 128 bits as hex. */
export const MIN_METRICS_TOKEN_LENGTH = 32;

/** The token in `text`, or the problem with it (for metrics.tokenFile's error). */
export function metricsToken(text: string): { token: string } | { problem: string } {
  if (Buffer.byteLength(text) > MAX_TOKEN_FILE_BYTES) return { problem: `is larger than ${MAX_TOKEN_FILE_BYTES} bytes; it must hold the token on one line` };
  const token = text.trim();
  if (token === '') return { problem: 'is empty' };
  if (/\s/.test(token)) return { problem: 'must hold the token on one line, without spaces' };
  if (token.length < MIN_METRICS_TOKEN_LENGTH) return { problem: `holds a token of ${token.length} characters; use at least ${MIN_METRICS_TOKEN_LENGTH} (openssl rand -hex 32)` };
  return { token };
}
