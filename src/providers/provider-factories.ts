// How each provider type is built (../upstream/provider.ts: a codec and its
// exchange settings, or the local demo): the second half of the provider
// table (../config/provider-types.ts says what each type accepts). A map over
// the config's type names, so a new type that lacks a factory does not compile.
// Each HTTP provider gets its own transport (../upstream/transport.ts): the
// shared built-in fetch, or a node:http transport with its own keep-alive
// agents, TLS material and egress proxy, as ./provider-connections.ts decided
// when the serving state was built. Every provider's exchanges (and the demo's
// pauses) run on the gateway's scheduler (../time/scheduler.ts), given once here.
// A host-added type (../api/providers.ts) is built from the adapter its checked
// config carries: the host's codec (./host-codec.ts) in the same exchange as
// the built-in types, with the same headers, key, deadlines and transport.
import type { AnthropicProviderConfig, HostProviderConfig, OpenAIProviderConfig, ProviderConfig } from '../config/config.ts';
import { checkHostCodec, HostCodecAdapter } from './host-codec.ts';
import { untranslatableRefusal } from './untranslatable-refusal.ts';
import { translationNotes } from '../chat/door-origin.ts';
import { exchangeSettings, upstreamCredential, upstreamHeaders } from '../upstream/exchange-settings.ts';
import type { ProviderBinding } from '../routing/alias-targets.ts';
import { systemScheduler, type Scheduler } from '../time/scheduler.ts';
import { createNodeTransport } from '../upstream/node-transport.ts';
import { proxyHook } from '../upstream/proxy-tunnel.ts';
import type { UpstreamTransport } from '../upstream/transport.ts';
import type { UpstreamKey } from '../upstream/exchange-settings.ts';
import type { ProviderConnection } from './provider-connections.ts';
import { createAnthropicProvider } from './anthropic.ts';
import { createDemoEmbedder, createDemoProvider } from './demo.ts';
import { createOpenAICompatibleProvider } from './openai-compatible.ts';
import { withTokenCounter } from './token-counters.ts';
import { DEFAULT_TOKEN_COUNT } from '../config/provider-defaults.ts';
import { settingsFor } from '../upstream/json-exchange.ts';
import { ProviderKind } from '../upstream/provider.ts';

type Factory<C extends ProviderConfig> = (config: C, apiKey: UpstreamKey | undefined, connection: ProviderConnection | undefined, scheduler: Scheduler) => ProviderBinding;

const FACTORIES: { readonly [T in ProviderConfig['type']]: Factory<Extract<ProviderConfig, { type: T }>> } = {
  openai: (config, apiKey, connection, scheduler) => {
    const provider = createOpenAICompatibleProvider({
      baseUrl: config.baseUrl,
      ...(apiKey === undefined ? {} : { apiKey }),
      apiKeyHeader: config.apiKeyHeader,
      headers: config.headers,
      responses: config.responses,
      responsesPassthrough: config.responsesPassthrough,
      responsesHostedTools: config.responsesHostedTools,
      ...deadlines(config),
      ...transportOf(config, connection),
      scheduler,
    });
    return {
      provider: withTokenCounter(provider, config.tokenCount ?? DEFAULT_TOKEN_COUNT.openai, config.baseUrl),
      maxTokensParam: config.maxTokensParam,
      policy: config.policy,
      // The same upstream, transport and deadlines, at its embeddings endpoint.
      embedder: { kind: ProviderKind.Http, settings: settingsFor(provider.settings, config.baseUrl, 'embeddings'), encoding: config.embeddingsEncoding },
    };
  },
  anthropic: (config, apiKey, connection, scheduler) => ({
    provider: withTokenCounter(createAnthropicProvider({
      baseUrl: config.baseUrl,
      ...(apiKey === undefined ? {} : { apiKey }),
      headers: config.headers,
      version: config.version,
      messagesPassthrough: config.messagesPassthrough,
      anthropicBetas: config.anthropicBetas,
      ...deadlines(config),
      ...transportOf(config, connection),
      scheduler,
    }), config.tokenCount ?? DEFAULT_TOKEN_COUNT.anthropic, config.baseUrl),
    // The adapter translates whichever field arrives into Anthropic's max_tokens.
    maxTokensParam: 'max_tokens',
    policy: config.policy,
    // Anthropic has no embeddings API (the config refuses an anthropic target in an embeddings alias).
    embedder: null,
  }),
  host: (config, apiKey, connection, scheduler) => {
    let created: unknown;
    try {
      created = config.adapter.create(config.settings, { name: config.name, baseUrl: config.baseUrl });
    } catch (error) {
      throw new Error(`provider "${config.name}" (type "${config.hostType}"): the adapter's create threw: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    const codec = new HostCodecAdapter(config.hostType, checkHostCodec(config.hostType, config.name, created));
    const keyHeader = config.apiKeyHeader;
    const keyPrefix = keyHeader === 'authorization' ? 'Bearer ' : '';
    // A host's ProviderKeySource is a function asked per exchange: it rides as the credential, as for openai.
    const settings = exchangeSettings(
      config.baseUrl,
      upstreamHeaders(config.headers, apiKey, keyHeader, keyPrefix),
      { ...deadlines(config), ...transportOf(config, connection), scheduler },
      upstreamCredential(apiKey, keyHeader, keyPrefix),
    );
    return {
      provider: {
        kind: ProviderKind.Http,
        codec,
        settings,
        // A door's request arrives as the chat translation: what it cannot say is refused first, as for an OpenAI upstream.
        refusal: (request) => untranslatableRefusal(request) ?? codec.refusal(request),
        requestNotes: translationNotes,
      },
      // The router sets max_tokens; the codec says it in the upstream's words.
      maxTokensParam: 'max_tokens',
      policy: config.policy,
      embedder: null,
    };
  },
  demo: (config, _apiKey, _connection, scheduler) => ({
    provider: createDemoProvider({ delayMs: config.delayMs, scheduler }),
    maxTokensParam: 'max_tokens',
    policy: null,
    embedder: createDemoEmbedder(),
  }),
};

/** The adapter for a checked provider config, and how the router calls it.
 * `connection`: how it reaches its upstream (resolveProviderConnections);
 * undefined: the built-in fetch, directly. `scheduler`: what its timers run on. */
export function createProviderBinding(
  config: ProviderConfig,
  apiKey: UpstreamKey | undefined,
  connection?: ProviderConnection,
  scheduler: Scheduler = systemScheduler,
): ProviderBinding {
  return (FACTORIES[config.type] as Factory<ProviderConfig>)(config, apiKey, connection, scheduler);
}

/**
 * A node transport per provider: its own agents (sockets never shared with
 * another provider's TLS settings or proxy), dropped with the provider on a
 * reload and drained by the agents' idle timeout (../upstream/node-transport.ts).
 */
function transportOf(config: OpenAIProviderConfig | AnthropicProviderConfig | HostProviderConfig, connection: ProviderConnection | undefined): { transport?: UpstreamTransport } {
  if (connection?.transport !== 'node') return {};
  const route = connection.proxy.route;
  return {
    transport: createNodeTransport({
      tls: connection.tls,
      connectTimeoutMs: config.policy.connectTimeoutMs,
      proxy: route === null ? null : proxyHook(route),
    }),
  };
}

function deadlines(config: OpenAIProviderConfig | AnthropicProviderConfig | HostProviderConfig): {
  timeoutMs: number;
  firstByteTimeoutMs: number;
  idleTimeoutMs: number;
  connectTimeoutMs: number;
} {
  const { timeoutMs, firstByteTimeoutMs, idleTimeoutMs, connectTimeoutMs } = config.policy;
  return { timeoutMs, firstByteTimeoutMs, idleTimeoutMs, connectTimeoutMs };
}
