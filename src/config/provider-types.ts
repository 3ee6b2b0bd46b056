// What each provider type accepts in the config. Per type: the settings it
// accepts and their check (issues go to the config's collector, defaults come
// from ./provider-defaults.ts), where its upstream key is looked for, and what
// serve says about it at start. How each type's adapter is built is the other
// half of the table, ../providers/provider-factories.ts, a map over the same
// type names that the compiler keeps complete. The config parser, check-config,
// serve and the gateway ask these two tables; nothing else switches on a type.
// A new built-in provider type is one entry in each (and its adapter). A
// provider type a host adds brings both halves in one object
// (../api/providers.ts), checked by ./host-provider-types.ts.
import type { AnthropicProviderConfig, BuiltInProviderConfig, DemoProviderConfig, EmbeddingsEncoding, MaxTokensParam, OpenAIProviderConfig, ProviderConfig, TokenCountMethod } from './config.ts';
import { HOST_PROVIDER } from './config.ts';
import { parseHostProvider, type HostProviderTypes } from './host-provider-types.ts';
import { join, type Checker, type Obj } from './config-checker.ts';
import { ANTHROPIC_BASE_URL, ANTHROPIC_VERSION, DEFAULT_DEMO_DELAY_MS, DEFAULT_EMBEDDINGS_ENCODING } from './provider-defaults.ts';
import { refuseSettings } from './passthrough-fields.ts';
import { parseKeyHeader, parseUpstreamOptions, UPSTREAM_SETTINGS } from './upstream-options.ts';
import { ANTHROPIC_ONLY_SETTINGS, parseAnthropicBetas, parseMessagesPassthrough, refuseAnthropicOnlySettings } from './anthropic-passthrough-config.ts';
import { OPENAI_ONLY_SETTINGS, parseResponsesMode, parseResponsesHostedTools, parseResponsesPassthrough, refuseOpenAIOnlySettings } from './responses-passthrough-config.ts';

type ProviderTypeName = BuiltInProviderConfig['type'];

interface ProviderType<C extends BuiltInProviderConfig> {
  /** Settings besides "type". */
  readonly settings: readonly string[];
  /** Checks `o` (already known to hold only `settings` and "type"); always returns a config, with defaults where a setting is missing or wrong. */
  parse(c: Checker, o: Obj, at: string): C;
  /** Where the upstream key is looked for; null for a type that needs none. */
  credentials(config: C): { apiKeyEnv: string | null; apiKeyFile: string | null } | null;
  /** What serve prints about this type at start, if anything. */
  readonly notice: string | null;
}

const MAX_TOKENS_PARAMS: readonly MaxTokensParam[] = ['max_tokens', 'max_completion_tokens'];
const EMBEDDINGS_ENCODINGS: readonly EmbeddingsEncoding[] = ['base64', 'float'];

/** Which provider type each upstream counting method needs. */
const TOKEN_COUNT_TYPES: Readonly<Record<Exclude<TokenCountMethod, 'estimate'>, string>> = {
  anthropic: 'anthropic',
  vllm: 'openai',
  llamacpp: 'openai',
};

/**
 * The optional `tokenCount` setting: one of `methods` (the type's), or a
 * problem that says which type the method needs when it is another type's.
 * Absent from the result when not set (the factory takes the type's default).
 */
function parseTokenCount<M extends TokenCountMethod>(c: Checker, o: Obj, at: string, type: ProviderTypeName, methods: readonly M[]): { tokenCount?: M } {
  const value = o['tokenCount'];
  if (value === undefined) return {};
  const vat = join(at, 'tokenCount');
  if (methods.includes(value as M)) return { tokenCount: value as M };
  const needs = typeof value === 'string' ? (TOKEN_COUNT_TYPES as Record<string, string | undefined>)[value] : undefined;
  if (needs !== undefined && needs !== type) {
    const quoted = methods.map((m) => `"${m}"`);
    const options = quoted.length === 1 ? quoted[0] : `${quoted.slice(0, -1).join(', ')} or ${quoted[quoted.length - 1]}`;
    c.report(vat, { code: 'invalid_value', message: `"${value}" counts tokens with a provider of type ${needs}; for type ${type} use ${options}` });
  } else c.oneOf(value, vat, methods);
  return {};
}

const openai: ProviderType<OpenAIProviderConfig> = {
  settings: [...UPSTREAM_SETTINGS, 'apiKeyHeader', 'maxTokensParam', ...OPENAI_ONLY_SETTINGS, 'tokenCount', 'embeddingsEncoding'],
  parse(c, o, at) {
    const upstream = parseUpstreamOptions(c, o, at, undefined, {
      resource: 'chat/completions',
      keyAdvice: 'set apiKeyEnv or apiKeyFile, and apiKeyHeader for a header other than Authorization (Azure OpenAI: "apiKeyHeader": "api-key")',
    });
    const apiKeyHeader = parseKeyHeader(c, o, at, upstream.headers);
    const maxTokensParam = c.optional(o, 'maxTokensParam', at, 'max_tokens' as MaxTokensParam, (v, vat) => c.oneOf(v, vat, MAX_TOKENS_PARAMS));
    const responses = parseResponsesMode(c, o, at);
    const responsesPassthrough = parseResponsesPassthrough(c, o, at, responses);
    const responsesHostedTools = parseResponsesHostedTools(c, o, at, responses);
    const embeddingsEncoding = c.optional(o, 'embeddingsEncoding', at, DEFAULT_EMBEDDINGS_ENCODING as EmbeddingsEncoding, (v, vat) => c.oneOf(v, vat, EMBEDDINGS_ENCODINGS));
    return {
      type: 'openai',
      ...upstream,
      apiKeyHeader,
      maxTokensParam,
      responses,
      responsesPassthrough,
      responsesHostedTools,
      embeddingsEncoding,
      ...parseTokenCount(c, o, at, 'openai', ['vllm', 'llamacpp', 'estimate']),
    };
  },
  credentials: ({ apiKeyEnv, apiKeyFile }) => ({ apiKeyEnv, apiKeyFile }),
  notice: null,
};

const anthropic: ProviderType<AnthropicProviderConfig> = {
  settings: [...UPSTREAM_SETTINGS, 'version', ...ANTHROPIC_ONLY_SETTINGS, 'tokenCount'],
  parse(c, o, at) {
    const upstream = parseUpstreamOptions(c, o, at, ANTHROPIC_BASE_URL, {
      resource: 'messages',
      keyAdvice: 'set apiKeyEnv or apiKeyFile (the key is sent in the x-api-key header)',
    });
    const version = c.optional(o, 'version', at, ANTHROPIC_VERSION, (v, vat) => {
      const text = c.string(v, vat);
      if (text === undefined || /^\d{4}-\d{2}-\d{2}$/.test(text)) return text;
      return c.report(vat, { code: 'invalid_value', message: 'must be an anthropic-version date such as "2023-06-01"' });
    });
    const messagesPassthrough = parseMessagesPassthrough(c, o, at);
    const anthropicBetas = parseAnthropicBetas(c, o, at);
    return { type: 'anthropic', ...upstream, version, messagesPassthrough, anthropicBetas, ...parseTokenCount(c, o, at, 'anthropic', ['anthropic', 'estimate']) };
  },
  credentials: ({ apiKeyEnv, apiKeyFile }) => ({ apiKeyEnv, apiKeyFile }),
  notice: null,
};

const demo: ProviderType<DemoProviderConfig> = {
  settings: ['delayMs', 'tokenCount'],
  parse: (c, o, at) => ({ type: 'demo', delayMs: c.int(o, 'delayMs', at, DEFAULT_DEMO_DELAY_MS, 0, 10_000), ...parseTokenCount(c, o, at, 'demo', ['estimate']) }),
  credentials: () => null,
  notice: 'provider "demo" is a built-in demo that echoes your prompt; it is not a language model.',
};

export const PROVIDER_TYPES: { readonly [T in ProviderTypeName]: ProviderType<Extract<BuiltInProviderConfig, { type: T }>> } = { openai, anthropic, demo };

export const PROVIDER_TYPE_NAMES = Object.keys(PROVIDER_TYPES) as ProviderTypeName[];

/** The entry for a built-in config's type. */
function entryOf(config: BuiltInProviderConfig): ProviderType<BuiltInProviderConfig> {
  return PROVIDER_TYPES[config.type] as ProviderType<BuiltInProviderConfig>;
}

/**
 * Checks one entry of "providers": its type first, then the settings that type
 * accepts. Returns undefined when the type itself is missing or unknown (its
 * other settings cannot be judged then).
 */
export function parseProvider(c: Checker, value: unknown, at: string, hostTypes?: HostProviderTypes): ProviderConfig | undefined {
  const o = c.map(value, at);
  if (o === undefined) return undefined;
  const hostType = hostTypes?.get(o['type'] as string);
  if (hostType !== undefined) return parseHostProvider(c, o, at, hostType);
  const names: readonly string[] = hostTypes === undefined || hostTypes.size === 0 ? PROVIDER_TYPE_NAMES : [...PROVIDER_TYPE_NAMES, ...hostTypes.keys()];
  const type = c.oneOf(o['type'], join(at, 'type'), names) as ProviderTypeName | undefined;
  if (type === undefined) return undefined;
  const entry = PROVIDER_TYPES[type] as ProviderType<BuiltInProviderConfig>;
  // Another type's door settings are said specifically, rather than as unknown settings.
  let rest = entry.settings.includes('messagesPassthrough') ? o : refuseAnthropicOnlySettings(c, o, at, type);
  if (!entry.settings.includes('responses')) rest = refuseOpenAIOnlySettings(c, rest, at, type);
  if (!entry.settings.includes('embeddingsEncoding')) {
    const why = type === 'anthropic' ? 'Anthropic has no embeddings API' : `a "${type}" provider makes its own vectors`;
    rest = refuseSettings(c, rest, at, ['embeddingsEncoding'], `applies to "type": "openai" providers only (${why}): remove it`);
  }
  c.object(rest, at, ['type', ...entry.settings]);
  return entry.parse(c, o, at);
}

export function providerCredentials(config: ProviderConfig): { apiKeyEnv: string | null; apiKeyFile: string | null } | null {
  if (config.type === HOST_PROVIDER) return { apiKeyEnv: config.apiKeyEnv, apiKeyFile: config.apiKeyFile };
  return entryOf(config).credentials(config);
}

/** The start notices of the types in use, each once. */
export function providerNotices(providers: readonly ProviderConfig[]): string[] {
  const notices = new Set<string>();
  for (const p of providers) {
    if (p.type === HOST_PROVIDER) continue;
    const notice = entryOf(p).notice;
    if (notice !== null) notices.add(notice);
  }
  return [...notices];
}

/** The type name a provider's config gave: a built-in type, or the host type's own name. */
export function providerTypeName(config: ProviderConfig): string {
  return config.type === HOST_PROVIDER ? config.hostType : config.type;
}
