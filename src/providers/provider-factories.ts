// How each provider type's adapter is built: the second half of the provider
// table (../config/provider-types.ts says what each type accepts). A map over
// the config's type names, so a new type that lacks a factory does not compile.
import type { AnthropicProviderConfig, OpenAIProviderConfig, ProviderConfig } from '../config/config.ts';
import type { ProviderBinding } from '../routing/alias-targets.ts';
import { createAnthropicProvider } from './anthropic.ts';
import { createDemoProvider } from './demo.ts';
import { createOpenAICompatibleProvider } from './openai-compatible.ts';

type Factory<C extends ProviderConfig> = (config: C, apiKey: string | undefined) => ProviderBinding;

const FACTORIES: { readonly [T in ProviderConfig['type']]: Factory<Extract<ProviderConfig, { type: T }>> } = {
  openai: (config, apiKey) => ({
    provider: createOpenAICompatibleProvider({
      baseUrl: config.baseUrl,
      ...(apiKey === undefined ? {} : { apiKey }),
      apiKeyHeader: config.apiKeyHeader,
      headers: config.headers,
      ...deadlines(config),
    }),
    maxTokensParam: config.maxTokensParam,
    policy: config.policy,
  }),
  anthropic: (config, apiKey) => ({
    provider: createAnthropicProvider({
      baseUrl: config.baseUrl,
      ...(apiKey === undefined ? {} : { apiKey }),
      headers: config.headers,
      version: config.version,
      ...deadlines(config),
    }),
    // The adapter translates whichever field arrives into Anthropic's max_tokens.
    maxTokensParam: 'max_tokens',
    policy: config.policy,
  }),
  demo: (config) => ({ provider: createDemoProvider({ delayMs: config.delayMs }), maxTokensParam: 'max_tokens', policy: null }),
};

/** The adapter for a checked provider config, and how the router calls it. */
export function createProviderBinding(config: ProviderConfig, apiKey: string | undefined): ProviderBinding {
  return (FACTORIES[config.type] as Factory<ProviderConfig>)(config, apiKey);
}

function deadlines(config: OpenAIProviderConfig | AnthropicProviderConfig): {
  timeoutMs: number;
  firstByteTimeoutMs: number;
  idleTimeoutMs: number;
  connectTimeoutMs: number;
} {
  const { timeoutMs, firstByteTimeoutMs, idleTimeoutMs, connectTimeoutMs } = config.policy;
  return { timeoutMs, firstByteTimeoutMs, idleTimeoutMs, connectTimeoutMs };
}
