// Assembles the gateway from a checked config: providers, alias targets,
// key store, usage ledger, routes, HTTP server. Everything here is wiring;
// the policy lives in the modules it connects.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GatewayConfig, ProviderConfig } from '../config/config.ts';
import { resolveProviderKeys } from '../config/config-loader.ts';
import { createRouter } from '../http/router.ts';
import { createHttpServer, type RouteHandler } from '../http/server.ts';
import type { Logger } from '../log/logger.ts';
import { createAnthropicProvider } from '../providers/anthropic.ts';
import { createDemoProvider } from '../providers/demo.ts';
import { createOpenAICompatibleProvider } from '../providers/openai-compatible.ts';
import { flushUsage } from '../usage/usage-file.ts';
import { createUsageLedger, type UsageLedger } from '../usage/usage-ledger.ts';
import { createAliasRoutes, type ProviderBinding } from './alias-targets.ts';
import type { KeyAuthenticator } from './auth.ts';
import { createChatCompletionsHandler } from './chat-completions.ts';
import { createModelsHandler } from './models.ts';

export interface GatewayOptions {
  config: GatewayConfig;
  keys: KeyAuthenticator;
  logger: Logger;
  env?: NodeJS.ProcessEnv;
  /** Seconds since the epoch, used as `created` in the alias listing. */
  loadedAt?: number;
  /** How often per-key usage is added to <dataDir>/usage.json (default 5 s). */
  usageFlushMs?: number;
}

export interface Gateway {
  server: Server;
  usage: UsageLedger;
  /** Starts listening; resolves with the bound address (port 0 picks a free one). */
  listen(port?: number, host?: string): Promise<AddressInfo>;
  /** Adds pending usage counters to disk now. */
  flushUsage(): Promise<void>;
  /** Stops accepting, waits for open requests, flushes usage. */
  close(): Promise<void>;
}

export function createGateway(options: GatewayOptions): Gateway {
  const { config, keys, logger } = options;
  const apiKeys = resolveProviderKeys(config, options.env ?? process.env);
  const bindings = new Map<string, ProviderBinding>();
  for (const [name, provider] of Object.entries(config.providers)) {
    bindings.set(name, bindProvider(provider, apiKeys.get(name)));
  }
  const routes = createAliasRoutes(config, bindings);
  const usage = createUsageLedger();

  const router = createRouter<RouteHandler>();
  router.add('POST', '/v1/chat/completions', createChatCompletionsHandler({ config, keys, routes, usage, logger }));
  router.add('GET', '/v1/models', createModelsHandler(config, keys, options.loadedAt ?? Math.floor(Date.now() / 1000)));
  const server = createHttpServer({ router, limits: config.limits, logger });

  const flush = async (): Promise<void> => {
    try {
      await flushUsage(config.dataDir, usage);
    } catch (err) {
      logger.error('usage flush failed; counters kept for the next flush', { error: err instanceof Error ? err.message : String(err) });
    }
  };
  const timer = setInterval(() => void flush(), options.usageFlushMs ?? 5000);
  timer.unref();

  return {
    server,
    usage,
    flushUsage: flush,
    listen(port = config.listen.port, host = config.listen.host) {
      return new Promise((resolve, reject) => {
        const onError = (err: Error): void => reject(err);
        server.once('error', onError);
        server.listen(port, host, () => {
          server.off('error', onError);
          resolve(server.address() as AddressInfo);
        });
      });
    },
    async close() {
      clearInterval(timer);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await flush();
    },
  };
}

/** One adapter per provider type; the only place that switches on the type. */
function bindProvider(provider: ProviderConfig, apiKey: string | undefined): ProviderBinding {
  switch (provider.type) {
    case 'demo':
      return { provider: createDemoProvider({ delayMs: provider.delayMs }), maxTokensParam: 'max_tokens', policy: null };
    case 'openai':
      return {
        provider: createOpenAICompatibleProvider({
          baseUrl: provider.baseUrl,
          ...(apiKey === undefined ? {} : { apiKey }),
          headers: provider.headers,
          timeoutMs: provider.policy.timeoutMs,
          firstByteTimeoutMs: provider.policy.firstByteTimeoutMs,
          idleTimeoutMs: provider.policy.idleTimeoutMs,
          connectTimeoutMs: provider.policy.connectTimeoutMs,
        }),
        maxTokensParam: provider.maxTokensParam,
        policy: provider.policy,
      };
    case 'anthropic':
      return {
        provider: createAnthropicProvider({
          baseUrl: provider.baseUrl,
          ...(apiKey === undefined ? {} : { apiKey }),
          headers: provider.headers,
          version: provider.version,
          timeoutMs: provider.policy.timeoutMs,
          firstByteTimeoutMs: provider.policy.firstByteTimeoutMs,
          idleTimeoutMs: provider.policy.idleTimeoutMs,
          connectTimeoutMs: provider.policy.connectTimeoutMs,
        }),
        // The adapter translates whichever field arrives into Anthropic's max_tokens.
        maxTokensParam: 'max_tokens',
        policy: provider.policy,
      };
  }
}
