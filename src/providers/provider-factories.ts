// How each provider type's adapter is built: the second half of the provider
// table (../config/provider-types.ts says what each type accepts). A map over
// the config's type names, so a new type that lacks a factory does not compile.
// Each HTTP provider gets its own transport (../upstream/transport.ts): the
// shared built-in fetch, or a node:http transport with its own keep-alive
// agents and TLS material, read from the files when the serving state is built.
import { ConfigError, type AnthropicProviderConfig, type GatewayConfig, type OpenAIProviderConfig, type ProviderConfig } from '../config/config.ts';
import type { ConfigIssue } from '../config/config-issues.ts';
import { loadClientTls, type ClientTlsMaterial } from '../config/tls-files.ts';
import type { ProviderBinding } from '../routing/alias-targets.ts';
import { createNodeTransport } from '../upstream/node-transport.ts';
import type { UpstreamTransport } from '../upstream/transport.ts';
import { createAnthropicProvider } from './anthropic.ts';
import { createDemoProvider } from './demo.ts';
import { createOpenAICompatibleProvider } from './openai-compatible.ts';

type Factory<C extends ProviderConfig> = (config: C, apiKey: string | undefined, tls: ClientTlsMaterial | undefined) => ProviderBinding;

const FACTORIES: { readonly [T in ProviderConfig['type']]: Factory<Extract<ProviderConfig, { type: T }>> } = {
  openai: (config, apiKey, tls) => ({
    provider: createOpenAICompatibleProvider({
      baseUrl: config.baseUrl,
      ...(apiKey === undefined ? {} : { apiKey }),
      apiKeyHeader: config.apiKeyHeader,
      headers: config.headers,
      ...deadlines(config),
      ...transportOf(config, tls),
    }),
    maxTokensParam: config.maxTokensParam,
    policy: config.policy,
  }),
  anthropic: (config, apiKey, tls) => ({
    provider: createAnthropicProvider({
      baseUrl: config.baseUrl,
      ...(apiKey === undefined ? {} : { apiKey }),
      headers: config.headers,
      version: config.version,
      ...deadlines(config),
      ...transportOf(config, tls),
    }),
    // The adapter translates whichever field arrives into Anthropic's max_tokens.
    maxTokensParam: 'max_tokens',
    policy: config.policy,
  }),
  demo: (config) => ({ provider: createDemoProvider({ delayMs: config.delayMs }), maxTokensParam: 'max_tokens', policy: null }),
};

/** The adapter for a checked provider config, and how the router calls it.
 * `tls`: the provider's TLS material (loadProviderTls), for the node transport. */
export function createProviderBinding(config: ProviderConfig, apiKey: string | undefined, tls?: ClientTlsMaterial): ProviderBinding {
  return (FACTORIES[config.type] as Factory<ProviderConfig>)(config, apiKey, tls);
}

/**
 * Reads every provider's TLS files (providers.*.tls), as start and each reload
 * do, so a rotated certificate is picked up by the next reload. Throws one
 * ConfigError naming every file problem of every provider.
 */
export function loadProviderTls(config: GatewayConfig, env: NodeJS.ProcessEnv): Map<string, ClientTlsMaterial> {
  const materials = new Map<string, ClientTlsMaterial>();
  const issues: ConfigIssue[] = [];
  for (const [name, provider] of Object.entries(config.providers)) {
    if (provider.type === 'demo' || provider.tls === null) continue;
    try {
      materials.set(name, loadClientTls(config.source, `providers.${name}.tls`, provider.tls, env));
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      issues.push(...err.issues);
    }
  }
  if (issues.length > 0) throw new ConfigError(config.source, issues);
  return materials;
}

/**
 * A node transport per provider: its own agents (sockets never shared with
 * another provider's TLS settings), dropped with the provider on a reload and
 * drained by the agents' idle timeout (../upstream/node-transport.ts).
 * The proxy hook is null here: the egress proxy integration supplies it.
 */
function transportOf(config: OpenAIProviderConfig | AnthropicProviderConfig, tls: ClientTlsMaterial | undefined): { transport?: UpstreamTransport } {
  if (config.transport !== 'node') return {};
  return { transport: createNodeTransport({ tls, connectTimeoutMs: config.policy.connectTimeoutMs, proxy: null }) };
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
