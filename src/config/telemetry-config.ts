// The "telemetry" section: OpenTelemetry traces (docs/config.md, "Telemetry";
// docs/tracing.md). Off until `otlp.endpoint` is set; trace context is
// propagated either way. Parsed strictly like the rest; header values may name
// environment variables (`${OTLP_TOKEN}`) and a headersFile (a systemd
// credential) may hold more: both are read at start, never logged.
import { createHash } from 'node:crypto';
import { ConfigError } from './config.ts';
import { ConfigIssueCode } from './config-issues.ts';
import { join, type Checker } from './config-checker.ts';
import { readConfigFile } from './config-files.ts';

export interface OtlpExportConfig {
  /** The OTLP/HTTP traces URL, e.g. http://127.0.0.1:4318/v1/traces. */
  endpoint: string;
  /** Header name (lower case) -> value as written; `${NAME}` is replaced from the environment at start. */
  headers: Record<string, string>;
  /** A file of `name: value` lines (one header each), read at start; null for none. */
  headersFile: string | null;
  timeoutMs: number;
  maxQueueSize: number;
  maxExportBatchSize: number;
  scheduleDelayMs: number;
  maxRetries: number;
}

export interface TelemetryConfig {
  serviceName: string;
  /** Extra resource attributes (deployment.environment.name, ...). */
  resourceAttributes: Record<string, string>;
  /** Share of new traces recorded; a client's sampled flag decides for its own. */
  samplerRatio: number;
  /** null: no exporter (nothing recorded; traceparent still propagated). */
  otlp: OtlpExportConfig | null;
}

export const DEFAULT_TELEMETRY: TelemetryConfig = { serviceName: 'portcullis', resourceAttributes: {}, samplerRatio: 1, otlp: null };

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]{1,64}$/;
const HEADER_VALUE = /^[\t\x20-\x7e]{0,4096}$/;
/** Headers the exporter sets itself or that HTTP owns. */
const RESERVED_HEADERS = new Set(['content-type', 'content-length', 'host', 'connection', 'transfer-encoding', 'keep-alive', 'upgrade', 'te', 'trailer']);
const ATTRIBUTE_KEY = /^[A-Za-z][A-Za-z0-9_.-]{0,127}$/;
const ENV_REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const MAX_HEADERS = 32;
const MAX_HEADERS_FILE_BYTES = 16 * 1024;

export function parseTelemetry(c: Checker, value: unknown): TelemetryConfig {
  const telemetry: TelemetryConfig = { ...DEFAULT_TELEMETRY, resourceAttributes: {} };
  if (value === undefined) return telemetry;
  const o = c.object(value, 'telemetry', ['serviceName', 'resourceAttributes', 'sampler', 'otlp']);
  if (o === undefined) return telemetry;
  telemetry.serviceName = c.optional(o, 'serviceName', 'telemetry', telemetry.serviceName, (v, at) => boundedString(c, v, at, 128));
  if (o['resourceAttributes'] !== undefined) telemetry.resourceAttributes = parseResourceAttributes(c, o['resourceAttributes']);
  if (o['sampler'] !== undefined) {
    const s = c.object(o['sampler'], 'telemetry.sampler', ['ratio']);
    if (s !== undefined) telemetry.samplerRatio = c.optional(s, 'ratio', 'telemetry.sampler', 1, (v, at) => ratio(c, v, at));
  }
  if (o['otlp'] !== undefined) telemetry.otlp = parseOtlp(c, o['otlp']) ?? null;
  return telemetry;
}

function parseOtlp(c: Checker, value: unknown): OtlpExportConfig | undefined {
  const at = 'telemetry.otlp';
  const o = c.object(value, at, ['endpoint', 'headers', 'headersFile', 'timeoutMs', 'maxQueueSize', 'maxExportBatchSize', 'scheduleDelayMs', 'maxRetries']);
  if (o === undefined) return undefined;
  const endpoint = o['endpoint'] === undefined ? c.report(join(at, 'endpoint'), { code: 'required', hint: '(the collector\'s OTLP/HTTP traces URL, e.g. "http://127.0.0.1:4318/v1/traces")' }) : parseEndpoint(c, o['endpoint'], join(at, 'endpoint'));
  const headers = o['headers'] === undefined ? {} : parseHeaders(c, o['headers'], join(at, 'headers'));
  const otlp: OtlpExportConfig = {
    endpoint: endpoint ?? '',
    headers,
    headersFile: c.optional(o, 'headersFile', at, null, (v, vat) => c.string(v, vat)),
    timeoutMs: c.int(o, 'timeoutMs', at, 10_000, 100, 60_000),
    maxQueueSize: c.int(o, 'maxQueueSize', at, 2048, 1, 100_000),
    maxExportBatchSize: c.int(o, 'maxExportBatchSize', at, 512, 1, 10_000),
    scheduleDelayMs: c.int(o, 'scheduleDelayMs', at, 5000, 10, 60_000),
    maxRetries: c.int(o, 'maxRetries', at, 3, 0, 10),
  };
  if (otlp.maxExportBatchSize > otlp.maxQueueSize) {
    c.report(join(at, 'maxExportBatchSize'), { code: 'conflict', message: `must not exceed telemetry.otlp.maxQueueSize (${otlp.maxQueueSize})` });
  }
  return otlp;
}

function parseEndpoint(c: Checker, value: unknown, at: string): string | undefined {
  const text = c.string(value, at);
  if (text === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return c.report(at, { code: 'invalid_value', message: 'must be an http:// or https:// URL, like "http://127.0.0.1:4318/v1/traces"' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return c.report(at, { code: 'invalid_value', message: 'must use http:// or https:// (OTLP over HTTP; gRPC is not supported)' });
  if (url.username !== '' || url.password !== '') return c.report(at, { code: 'invalid_value', message: 'must not hold credentials; put them in telemetry.otlp.headers or headersFile' });
  return text;
}

function parseHeaders(c: Checker, value: unknown, at: string): Record<string, string> {
  const o = c.map(value, at);
  const headers: Record<string, string> = {};
  if (o === undefined) return headers;
  if (Object.keys(o).length > MAX_HEADERS) c.report(at, { code: 'too_many', message: `must have at most ${MAX_HEADERS} headers` });
  for (const [name, v] of Object.entries(o)) {
    const hat = join(at, name);
    const lower = name.toLowerCase();
    if (!HEADER_NAME.test(lower)) c.report(hat, { code: 'invalid_name', message: 'is not an HTTP header name' });
    else if (RESERVED_HEADERS.has(lower)) c.report(hat, { code: 'reserved', message: 'is set by the exporter or by HTTP itself' });
    // The value is never repeated in the message: it may be a token.
    else if (typeof v !== 'string' || !HEADER_VALUE.test(v)) c.report(hat, { code: 'invalid_value', message: 'must be a string of printable ASCII (at most 4096 characters), e.g. "Bearer ${OTLP_TOKEN}"' });
    else headers[lower] = v;
  }
  return headers;
}

function parseResourceAttributes(c: Checker, value: unknown): Record<string, string> {
  const at = 'telemetry.resourceAttributes';
  const o = c.map(value, at);
  const attributes: Record<string, string> = {};
  if (o === undefined) return attributes;
  if (Object.keys(o).length > MAX_HEADERS) c.report(at, { code: 'too_many', message: `must have at most ${MAX_HEADERS} attributes` });
  for (const [key, v] of Object.entries(o)) {
    const kat = join(at, key);
    if (!ATTRIBUTE_KEY.test(key)) c.report(kat, { code: 'invalid_name', message: 'attribute keys use letters, digits, ".", "_" and "-" (at most 128), like "deployment.environment.name"' });
    else if (key === 'service.name') c.report(kat, { code: 'reserved', message: 'is set by telemetry.serviceName' });
    else {
      const text = boundedString(c, v, kat, 256);
      if (text !== undefined) attributes[key] = text;
    }
  }
  return attributes;
}

function boundedString(c: Checker, value: unknown, at: string, max: number): string | undefined {
  const text = c.string(value, at);
  if (text === undefined || text.length <= max) return text;
  return c.report(at, { code: 'invalid_value', message: `must be at most ${max} characters` });
}

function ratio(c: Checker, value: unknown, at: string): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 1) return value;
  return c.report(at, { code: 'invalid_value', message: 'must be a number from 0 (no new trace recorded) to 1 (every one)' });
}

/**
 * The export headers with every `${NAME}` replaced from the environment and
 * the headersFile's lines added: read at start, so a missing variable or file
 * stops the gateway with the setting named. Throws ConfigError.
 */
export function resolveOtlpHeaders(source: string | null, otlp: OtlpExportConfig, env: NodeJS.ProcessEnv): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, template] of Object.entries(otlp.headers)) {
    const at = `telemetry.otlp.headers.${name}`;
    headers[name] = template.replace(ENV_REFERENCE, (_m, variable: string) => {
      const found = env[variable];
      if (found === undefined || found === '') throw new ConfigError(source, at, `environment variable ${variable} is not set or empty`, ConfigIssueCode.MissingCredential);
      if (/[\r\n\0]/.test(found)) throw new ConfigError(source, at, `environment variable ${variable} holds a line break`, ConfigIssueCode.MissingCredential);
      // Node refuses any other control or non-Latin-1 character in a header at the first export; refuse it at start instead.
      if (!HEADER_VALUE.test(found)) {
        throw new ConfigError(source, at, `environment variable ${variable} must be printable ASCII (at most 4096 characters) to go in a header`, ConfigIssueCode.MissingCredential);
      }
      return found;
    });
  }
  if (otlp.headersFile !== null) Object.assign(headers, readHeadersFile(source, otlp.headersFile, env));
  return headers;
}

/** `name: value` per line; blank lines and `#` comments skipped. A bad line is named by number, never quoted. */
function readHeadersFile(source: string | null, file: string, env: NodeJS.ProcessEnv): Record<string, string> {
  const at = 'telemetry.otlp.headersFile';
  const { path, bytes } = readConfigFile(source, at, file, env, MAX_HEADERS_FILE_BYTES, ConfigIssueCode.MissingCredential);
  const headers: Record<string, string> = {};
  const lines = bytes.toString('utf8').split(/\r?\n/);
  for (const [index, line] of lines.entries()) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const colon = trimmed.indexOf(':');
    const name = colon <= 0 ? '' : trimmed.slice(0, colon).trim().toLowerCase();
    const value = trimmed.slice(colon + 1).trim();
    if (!HEADER_NAME.test(name) || RESERVED_HEADERS.has(name) || !HEADER_VALUE.test(value) || value === '') {
      throw new ConfigError(source, at, `${path} line ${index + 1} must be "name: value" (a header name that is not reserved, a printable value)`, ConfigIssueCode.MissingCredential);
    }
    headers[name] = value;
  }
  if (Object.keys(headers).length > MAX_HEADERS) throw new ConfigError(source, at, `${path} holds more than ${MAX_HEADERS} headers`, ConfigIssueCode.MissingCredential);
  return headers;
}

/**
 * The section as a reload compares it (it needs a restart): header values
 * replaced by a short digest, so a changed token is noticed and the
 * "needs a restart" log line never shows one.
 */
export function telemetryForComparison(telemetry: TelemetryConfig): unknown {
  if (telemetry.otlp === null) return telemetry;
  const headers: Record<string, string> = {};
  for (const [name, v] of Object.entries(telemetry.otlp.headers)) headers[name] = `sha256:${createHash('sha256').update(v).digest('hex').slice(0, 12)}`;
  return { ...telemetry, otlp: { ...telemetry.otlp, headers } };
}
