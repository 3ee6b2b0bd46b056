// Integration harness: the real gateway on 127.0.0.1 port 0, a fake upstream
// on port 0, a temp data directory with one live key. Nothing leaves loopback.
import { mkdtempSync, rmSync } from 'node:fs';
import http, { type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseConfig } from '../../src/config/config-parser.ts';
import type { ProviderAdapter } from '../../src/api/providers.ts';
import type { ProviderKeySource } from '../../src/api/ports.ts';
import type { GatewayConfig } from '../../src/config/config.ts';
import type { ListenerTlsMaterial } from '../../src/config/tls-files.ts';
import { createGateway, type Gateway, type ReloadSummary } from '../../src/gateway/gateway.ts';
import { API_LISTENER, listenOn } from '../../src/ops/listen.ts';
import type { KeySettingsInput } from '../../src/keys/key-settings.ts';
import type { GatewayMetrics } from '../../src/metrics/gateway-metrics.ts';
import type { Limiter } from '../../src/limits/limiter.ts';
import { openFileBackend, type FileBackend } from '../../src/state/file-backend.ts';
import { createLogger } from '../../src/log/logger.ts';
import type { Scheduler } from '../../src/time/scheduler.ts';
import { startFakeUpstream as startSharedUpstream } from '../../src/testing/fake-upstream.ts';
import { responseStoreLimits } from '../../src/state/response-store-port.ts';
import { systemScheduler } from '../../src/time/scheduler.ts';

export interface UpstreamRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** The shared fake upstream (../../src/testing/fake-upstream.ts) seen as the gateway tests use it: the requests with their JSON bodies parsed. */
export interface FakeUpstream {
  baseUrl: string;
  requests: UpstreamRequest[];
  /** Resolves when the upstream sees the client side of a request close early. */
  aborted: Promise<void>;
  handle: (req: UpstreamRequest, res: ServerResponse) => void | Promise<void>;
  close(): Promise<void>;
}

export async function startFakeUpstream(handle: FakeUpstream['handle']): Promise<FakeUpstream> {
  let markAborted: () => void = () => {};
  const aborted = new Promise<void>((resolve) => {
    markAborted = resolve;
  });
  const view: FakeUpstream = { baseUrl: '', requests: [], aborted, handle, close: () => Promise.resolve() };
  const shared = await startSharedUpstream((_req, res, received) => {
    const record: UpstreamRequest = { method: received.method, url: received.url, headers: received.headers, body: received.text === '' ? undefined : JSON.parse(received.text) };
    view.requests.push(record);
    res.on('close', () => {
      if (!res.writableFinished) markAborted();
    });
    return view.handle(record, res);
  });
  view.baseUrl = shared.baseUrl;
  view.close = () => shared.close();
  return view;
}

export interface TestGateway {
  baseUrl: string;
  key: string;
  keyId: string;
  dataDir: string;
  logs: Record<string, unknown>[];
  /** The gateway itself (routes, inFlight, shutdown) and its state backend (keys, limiter). */
  gateway: Gateway;
  state: FileBackend;
  flushUsage(): Promise<void>;
  close(): Promise<void>;
}

export interface StartGatewayOptions {
  configValue?: Record<string, unknown>;
  upstreamBaseUrl?: string;
  env?: NodeJS.ProcessEnv;
  /** The gateway's metrics; their sources may read TestGateway.gateway once started. */
  metrics?: GatewayMetrics;
  /** The gateway's clock and timers: key expiry, limits, breakers, upstream timeouts, retries, the write-stall sweep (default: the system's). */
  scheduler?: Scheduler;
  /** Settings of the created key (allowed aliases, expiry, limits); default none. */
  keySettings?: KeySettingsInput;
  /** Serve the API over HTTPS with this material (baseUrl is then https://). */
  tls?: ListenerTlsMaterial;
  /** A limiter in place of the backend's own (e.g. a memory limiter with a short lease); closed with the gateway. */
  limiter?: Limiter;
  /** Provider types a host registers, for the config's providers. */
  providerTypes?: readonly ProviderAdapter[];
  /** A host's upstream key source, asked per exchange. */
  providerKey?: ProviderKeySource;
}

/**
 * Starts the gateway. `configValue` is a config file's content; by default the
 * embedded demo setup. `upstreamBaseUrl` adds an "openai" provider `fake`
 * behind alias `service-fake`.
 */
export async function startGateway(options: StartGatewayOptions = {}): Promise<TestGateway> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-it-'));
  const value: Record<string, unknown> = options.configValue ?? {
    providers: {
      demo: { type: 'demo' },
      ...(options.upstreamBaseUrl === undefined ? {} : { fake: {
              type: 'openai',
              baseUrl: options.upstreamBaseUrl,
              apiKeyEnv: 'FAKE_UPSTREAM_KEY',
              // One attempt and a breaker that never opens: each test sees exactly
              // the upstream answer it set up. Resilience tests configure their own.
              retry: { maxAttempts: 1 },
              circuitBreaker: { failureThreshold: 1000 },
            }, }),
    },
    aliases: {
      'service-chat': { provider: 'demo', model: 'portcullis-demo' },
      ...(options.upstreamBaseUrl === undefined ? {} : { 'service-fake': { provider: 'fake', model: 'upstream-model-1' } }),
    },
    auto: { default: 'service-chat' },
  };
  const config = parseConfig({ ...value, dataDir }, null, dataDir, { providerTypes: options.providerTypes });
  const backend = openFileBackend(dataDir);
  const ownLimiter = options.limiter;
  const state: FileBackend =
    ownLimiter === undefined
      ? backend
      : {
          ...backend,
          limiter: ownLimiter,
          async close() {
            await ownLimiter.close();
            await backend.close();
          },
        };
  const keys = state.keys;
  const created = await keys.create('integration', options.keySettings);
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger({ level: 'debug', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) });
  // As serve opens it: the store of the state backend, when the config turns it on.
  const storeConfig = config.responses.store;
  const responseStore = storeConfig.enabled ? await state.openResponseStore(responseStoreLimits(storeConfig), options.scheduler ?? systemScheduler, () => undefined) : undefined;
  const gateway = createGateway({
    config,
    state,
    logger,
    ...(responseStore === undefined ? {} : { responseStore }),
    env: { FAKE_UPSTREAM_KEY: 'sk-upstream-secret', ...options.env },
    loadedAt: 1_700_000_000,
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    ...(options.scheduler === undefined ? {} : { scheduler: options.scheduler }),
    ...(options.tls === undefined ? {} : { tls: options.tls }),
    ...(options.providerKey === undefined ? {} : { providerKey: options.providerKey }),
  });
  const address = await listenLocal(gateway);
  return {
    baseUrl: `${options.tls === undefined ? 'http' : 'https'}://127.0.0.1:${address.port}`,
    key: created.key,
    keyId: created.record.id,
    dataDir,
    logs,
    gateway,
    state,
    flushUsage: () => gateway.flushUsage(),
    async close() {
      gateway.server.closeAllConnections();
      await gateway.close();
      await state.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json(): unknown;
}

/**
 * A raw HTTP/1.1 request with node:http, so tests see exact status, headers
 * and bytes (fetch would hide some of them).
 */
export function request(
  baseUrl: string,
  method: string,
  urlPath: string,
  options: { headers?: Record<string, string>; body?: string | Buffer; agent?: http.Agent | false } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${baseUrl}${urlPath}`, { method, headers: options.headers ?? {}, agent: options.agent ?? false }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** POST /v1/chat/completions with JSON and the given key. */
export function postChat(gw: TestGateway, body: unknown, headers: Record<string, string> = {}): Promise<RawResponse> {
  return request(gw.baseUrl, 'POST', '/v1/chat/completions', {
    headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.key}`, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** Splits an SSE body into its `data:` payloads, checking the framing strictly. */
export function sseData(text: string): string[] {
  if (!text.endsWith('\n\n')) throw new Error(`stream does not end with a blank line: ${JSON.stringify(text.slice(-40))}`);
  return text
    .slice(0, -2)
    .split('\n\n')
    .map((frame) => {
      if (!frame.startsWith('data: ') || frame.includes('\n')) throw new Error(`unexpected frame ${JSON.stringify(frame)}`);
      return frame.slice('data: '.length);
    });
}

/** A streaming request whose headers have arrived; `body` resolves at its end. */
export function openStream(gw: TestGateway, key: string, payload: unknown): Promise<{ status: number; body: Promise<string> }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${gw.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    });
    req.on('response', (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      const body = new Promise<string>((done, fail) => {
        res.on('end', () => done(Buffer.concat(parts).toString('utf8')));
        res.on('error', fail);
      });
      resolve({ status: res.statusCode ?? 0, body });
    });
    req.on('error', reject);
    req.end(JSON.stringify(payload));
  });
}

/** The gateway's API listener on a free loopback port, bound the way `serve` binds it. */
export async function listenLocal(gateway: Gateway): Promise<AddressInfo> {
  await listenOn(gateway.server, undefined, 0, '127.0.0.1', API_LISTENER);
  return gateway.server.address() as AddressInfo;
}

/** A reload the way `serve` does it on SIGHUP: prepare (may throw ConfigError), then commit. */
export function reload(gateway: Gateway, config: GatewayConfig): ReloadSummary {
  const prepared = gateway.prepareReload(config);
  prepared.commit();
  return prepared.summary;
}
