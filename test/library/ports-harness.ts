// An embedded gateway with a host's ports: the state composed by openLibraryState
// in a temp data directory, the real gateway on 127.0.0.1 port 0, and a fake
// OpenAI-compatible upstream on port 0 that answers every chat request and keeps
// what it received. Log records are kept parsed.
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Authenticator } from '../../src/api/keys.ts';
import type { ProviderKeySource, TraceExporter } from '../../src/api/ports.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { createGateway, type Gateway } from '../../src/gateway/gateway.ts';
import { openLibraryState, type LibraryStatePorts } from '../../src/library/compose-state.ts';
import { createLogger } from '../../src/log/logger.ts';
import { API_LISTENER, listenOn } from '../../src/ops/listen.ts';
import type { StateBackend } from '../../src/state/state-backend.ts';
import { sendJson, startFakeUpstream, type FakeUpstream } from '../../src/testing/fake-upstream.ts';

export interface PortsGateway {
  baseUrl: string;
  dataDir: string;
  gateway: Gateway;
  state: StateBackend;
  upstream: FakeUpstream;
  logs: Record<string, unknown>[];
  close(): Promise<void>;
}

export interface PortsGatewayOptions extends LibraryStatePorts {
  authenticate?: Authenticator;
  providerKey?: ProviderKeySource;
  traceExporter?: TraceExporter;
  /** The environment the config's apiKeyEnv is read from (default: FAKE_UPSTREAM_KEY=sk-config-key). */
  env?: NodeJS.ProcessEnv;
}

export const CHAT_ANSWER = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'upstream-model-1',
  choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
};

export async function startPortsGateway(options: PortsGatewayOptions = {}): Promise<PortsGateway> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-ports-'));
  const upstream = await startFakeUpstream((_req, res) => sendJson(res, 200, CHAT_ANSWER));
  const config = parseConfig(
    {
      dataDir,
      providers: {
        fake: { type: 'openai', baseUrl: upstream.baseUrl, apiKeyEnv: 'FAKE_UPSTREAM_KEY', retry: { maxAttempts: 1 }, circuitBreaker: { failureThreshold: 1000 } },
      },
      aliases: { 'service-fake': { provider: 'fake', model: 'upstream-model-1' }, 'service-other': { provider: 'fake', model: 'upstream-model-2' } },
      auto: { default: 'service-fake' },
    },
    null,
    dataDir,
  );
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger({ level: 'debug', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) });
  const env = options.env ?? { FAKE_UPSTREAM_KEY: 'sk-config-key' };
  const state = await openLibraryState(config, { keys: options.keys, usage: options.usage, limiter: options.limiter }, { logger, env });
  let gateway: Gateway;
  try {
    gateway = createGateway({
      config,
      state,
      logger,
      env,
      loadedAt: 1_700_000_000,
      authenticate: options.authenticate,
      providerKey: options.providerKey,
      traceExporter: options.traceExporter,
    });
  } catch (error) {
    await state.close();
    await upstream.close();
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  await listenOn(gateway.server, undefined, 0, '127.0.0.1', API_LISTENER);
  const { port } = gateway.server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    dataDir,
    gateway,
    state,
    upstream,
    logs,
    async close() {
      gateway.server.closeAllConnections();
      await gateway.close();
      await state.close();
      await upstream.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** POST /v1/chat/completions; `key` null sends no Authorization header. */
export async function postChat(gw: PortsGateway, key: string | null, model = 'service-fake'): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${gw.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key === null ? {} : { authorization: `Bearer ${key}` }) },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }] }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The records logged with message `msg`. */
export function logged(gw: PortsGateway, msg: string): Record<string, unknown>[] {
  return gw.logs.filter((line) => line['msg'] === msg);
}
