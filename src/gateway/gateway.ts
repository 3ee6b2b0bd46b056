// Assembles the gateway from a checked config: providers, key store, routes,
// HTTP server. Everything here is wiring; the policy lives in the modules it
// connects.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GatewayConfig, ProviderConfig } from '../config/config.ts';
import { resolveProviderKeys } from '../config/config-loader.ts';
import { createRouter } from '../http/router.ts';
import { createHttpServer, type RouteHandler } from '../http/server.ts';
import type { Logger } from '../log/logger.ts';
import { createDemoProvider } from '../providers/demo.ts';
import { createOpenAICompatibleProvider } from '../providers/openai-compatible.ts';
import type { ChatProvider } from '../providers/provider.ts';
import type { KeyAuthenticator } from './auth.ts';
import { createChatCompletionsHandler, type UpstreamBinding } from './chat-completions.ts';
import { createModelsHandler } from './models.ts';

export interface GatewayOptions {
  config: GatewayConfig;
  keys: KeyAuthenticator;
  logger: Logger;
  env?: NodeJS.ProcessEnv;
  /** Seconds since the epoch, used as `created` in the alias listing. */
  loadedAt?: number;
}

export interface Gateway {
  server: Server;
  /** Starts listening; resolves with the bound address (port 0 picks a free one). */
  listen(port?: number, host?: string): Promise<AddressInfo>;
  close(): Promise<void>;
}

export function createGateway(options: GatewayOptions): Gateway {
  const { config, keys, logger } = options;
  const apiKeys = resolveProviderKeys(config, options.env ?? process.env);
  const upstreams = new Map<string, UpstreamBinding>();
  for (const [name, provider] of Object.entries(config.providers)) {
    upstreams.set(name, bindProvider(provider, apiKeys.get(name)));
  }

  const router = createRouter<RouteHandler>();
  router.add('POST', '/v1/chat/completions', createChatCompletionsHandler({ config, keys, upstreams, logger }));
  router.add('GET', '/v1/models', createModelsHandler(config, keys, options.loadedAt ?? Math.floor(Date.now() / 1000)));

  const server = createHttpServer({ router, limits: config.limits, logger });
  return {
    server,
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
    close() {
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
    },
  };
}

function bindProvider(provider: ProviderConfig, apiKey: string | undefined): UpstreamBinding {
  let chat: ChatProvider;
  switch (provider.type) {
    case 'demo':
      return { provider: createDemoProvider({ delayMs: provider.delayMs }), maxTokensParam: 'max_tokens' };
    case 'openai':
      chat = createOpenAICompatibleProvider({
        baseUrl: provider.baseUrl,
        ...(apiKey === undefined ? {} : { apiKey }),
        headers: provider.headers,
        timeoutMs: provider.timeoutMs,
        firstByteTimeoutMs: provider.firstByteTimeoutMs,
      });
      return { provider: chat, maxTokensParam: provider.maxTokensParam };
  }
}
