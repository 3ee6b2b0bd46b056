// The upstreams that count tokens themselves, one counter per method of the
// provider setting `tokenCount` (docs/config.md, "Token counting"):
// - "anthropic": POST {baseUrl}/messages/count_tokens with the body the
//   passthrough sends (the client's Messages body, the upstream's model),
//   less the fields that only steer generation; answer `{"input_tokens": N}`.
//   https://platform.claude.com/docs/en/api/messages-count-tokens
// - "vllm": POST {server root}/tokenize with the chat request's `model`,
//   `messages` and `tools` (vLLM renders them with the model's chat template,
//   as a chat completion would); answer `{"count": N, ...}`.
//   https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html#tokenizer-api
// - "llamacpp": POST {server root}/apply-template with `messages` and `tools`
//   (answer `{"prompt": "..."}`), then POST {server root}/tokenize with that
//   prompt, special tokens parsed as the chat endpoint does (answer
//   `{"tokens": [...]}`).
//   https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md
// The server root is the provider's baseUrl without a trailing /v1: both
// servers serve these endpoints beside /v1, not under it.
// Each counter uses the provider's own exchange settings (transport, key,
// deadlines, scheduler, response bound), aimed at its endpoints once, when
// the provider is built.
import type { TokenCountMethod } from '../config/config.ts';
import { exchangeJson, settingsFor } from '../upstream/json-exchange.ts';
import type { ExchangeSettings } from '../upstream/exchange-settings.ts';
import type { HttpProvider, ProviderCodec, TokenCounter, TokenCountInput, UpstreamCall } from '../upstream/provider.ts';

/** An upstream's 2xx answer that holds no usable count: `detail` says what was wrong (for the access line). */
export class TokenCountAnswerError extends Error {
  readonly detail: string;
  constructor(detail: string) {
    super(`The upstream's token count answer is unusable: ${detail}.`);
    this.name = 'TokenCountAnswerError';
    this.detail = detail;
  }
}

/** Top-level fields of a Messages body that steer generation only: count_tokens takes none of them. */
const GENERATION_ONLY_FIELDS: ReadonlySet<string> = new Set(['max_tokens', 'stream', 'metadata', 'stop_sequences', 'temperature', 'top_p', 'top_k', 'service_tier']);

/** The count_tokens body for an Anthropic upstream: the client's body with the upstream model, without the generation-only fields. */
export function anthropicCountBody(body: Readonly<Record<string, unknown>>, model: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(body)) {
    if (!GENERATION_ONLY_FIELDS.has(key)) out[key] = body[key];
  }
  out['model'] = model;
  return out;
}

/** `baseUrl` without a trailing `/v1` path segment (and without its query). */
export function serverRoot(baseUrl: string): string {
  const url = new URL(baseUrl);
  let path = url.pathname;
  while (path.endsWith('/')) path = path.slice(0, -1);
  if (path.endsWith('/v1')) path = path.slice(0, -3);
  url.pathname = path === '' ? '/' : path;
  url.search = '';
  return url.toString();
}

function parseAnswer(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new TokenCountAnswerError('not_json');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TokenCountAnswerError('not_object');
  return value as Record<string, unknown>;
}

/** A count must be a positive safe integer: 0 for a request that has messages is no count. */
function countOf(answer: Record<string, unknown>, field: string): number {
  const value = answer[field];
  if (value === undefined) throw new TokenCountAnswerError(`no_${field}`);
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) throw new TokenCountAnswerError(`bad_${field}`);
  return value;
}

/** The chat request's tools, when it has any, for the upstream's template. */
function toolsOf(input: TokenCountInput): { tools?: unknown } {
  const tools = input.request.tools;
  return tools === undefined || tools.length === 0 ? {} : { tools };
}

/** Anthropic's count_tokens, with the headers the codec gives the request (the client's anthropic-version and allowed betas). */
function anthropicCounter(settings: ExchangeSettings, codec: ProviderCodec): TokenCounter {
  return {
    method: 'anthropic',
    async count(input, call) {
      const text = await exchangeJson(settings, call, JSON.stringify(anthropicCountBody(input.body, input.request.model)), codec.requestHeaders?.(call.request));
      return countOf(parseAnswer(text), 'input_tokens');
    },
  };
}

function vllmCounter(settings: ExchangeSettings): TokenCounter {
  return {
    method: 'vllm',
    async count(input, call) {
      const { model, messages } = input.request;
      const body = JSON.stringify({ model, messages, ...toolsOf(input), add_generation_prompt: true });
      return countOf(parseAnswer(await exchangeJson(settings, call, body)), 'count');
    },
  };
}

function llamacppCounter(templateSettings: ExchangeSettings, tokenizeSettings: ExchangeSettings): TokenCounter {
  return {
    method: 'llamacpp',
    async count(input, call: UpstreamCall) {
      const templated = parseAnswer(await exchangeJson(templateSettings, call, JSON.stringify({ messages: input.request.messages, ...toolsOf(input) })));
      const prompt = templated['prompt'];
      if (typeof prompt !== 'string') throw new TokenCountAnswerError(prompt === undefined ? 'no_prompt' : 'bad_prompt');
      const body = JSON.stringify({ content: prompt, add_special: true, parse_special: true });
      const tokens = parseAnswer(await exchangeJson(tokenizeSettings, call, body))['tokens'];
      if (!Array.isArray(tokens)) throw new TokenCountAnswerError(tokens === undefined ? 'no_tokens' : 'bad_tokens');
      if (tokens.length === 0) throw new TokenCountAnswerError('bad_tokens');
      return tokens.length;
    },
  };
}

/**
 * The counter for `method` on `provider`'s upstream at `baseUrl`, or
 * undefined for "estimate". Throws TypeError for a baseUrl that cannot work
 * (the config check has refused it before).
 */
export function createTokenCounter(method: TokenCountMethod, provider: HttpProvider, baseUrl: string): TokenCounter | undefined {
  const { settings } = provider;
  switch (method) {
    case 'anthropic':
      return anthropicCounter(settingsFor(settings, baseUrl, 'messages/count_tokens'), provider.codec);
    case 'vllm':
      return vllmCounter(settingsFor(settings, serverRoot(baseUrl), 'tokenize'));
    case 'llamacpp':
      return llamacppCounter(settingsFor(settings, serverRoot(baseUrl), 'apply-template'), settingsFor(settings, serverRoot(baseUrl), 'tokenize'));
    default:
      return undefined;
  }
}

/** `provider` with the counter for `method`; the provider itself for "estimate". */
export function withTokenCounter(provider: HttpProvider, method: TokenCountMethod, baseUrl: string): HttpProvider {
  const tokenCounter = createTokenCounter(method, provider, baseUrl);
  return tokenCounter === undefined ? provider : { ...provider, tokenCounter };
}
