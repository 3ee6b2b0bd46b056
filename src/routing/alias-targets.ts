// Binds each alias to its upstream targets, once per configuration: one
// target record each (id, provider adapter, upstream model, price, retry
// policy, circuit breaker, the client's label for it), the breaker shared by
// every alias that uses the same provider+model. A request's plan points at
// those records; the upstream request for a target is built when an attempt
// first needs it.
import { DEFAULT_MAX_OUTPUT_TOKENS, type GatewayConfig, type MaxTokensParam, type Price, type ProviderConfig, type TargetConfig, type UpstreamPolicy } from '../config/config.ts';
import { maxInputsPerCall } from '../config/alias-kind-config.ts';
import { providerTypeName } from '../config/provider-types.ts';
import type { ChatRequest } from '../chat/types.ts';
import { buildUpstreamRequest } from '../chat/upstream-request.ts';
import { hasDoorOrigin } from '../chat/door-origin.ts';
import { InvalidRequestError } from '../errors/api-error.ts';
import type { EmbeddingsRequest } from '../embeddings/embeddings-types.ts';
import type { EmbeddingsProvider, EmbeddingsTarget } from '../upstream/embeddings-exchange.ts';
import { ProviderKind, type ChatProvider } from '../upstream/provider.ts';
import { createBreakerRegistry, type BreakerRegistry, type CircuitBreaker, type RecordedFailure, type State as BreakerState } from '../upstream/circuit-breaker.ts';
import { anyTargetAvailable, type UpstreamTarget } from '../upstream/dispatcher.ts';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../upstream/retry-policy.ts';
import { everyTargetRefused, targetLabel, type TargetRefusal } from './target-refusals.ts';

export interface ProviderBinding {
  provider: ChatProvider;
  maxTokensParam: MaxTokensParam;
  /** null for the demo provider: nothing to retry or break. */
  policy: UpstreamPolicy | null;
  /** How it embeds; null or absent: it has no embeddings (Anthropic). */
  embedder?: EmbeddingsProvider | null;
}

/** One target of one alias, built with the configuration and never per request. */
interface TargetRecord {
  /** `provider/model`: the breaker's key, the access line's and the metrics' name. */
  readonly id: string;
  /** The client's name for it (./target-refusals.ts targetLabel). */
  readonly label: string;
  readonly provider: ChatProvider;
  /** The model name the upstream knows. */
  readonly model: string;
  readonly priority: number;
  readonly weight: number;
  readonly maxTokensParam: MaxTokensParam;
  /** null when unpriced: its cost is not counted. */
  readonly price: Price | null;
  readonly retry: RetryPolicy;
  readonly breaker: CircuitBreaker;
  /** An embeddings alias's target: how it embeds, its inputs per call, whether it takes `dimensions`; null on a chat alias. */
  readonly embeddings: EmbeddingsSettings | null;
}

interface EmbeddingsSettings {
  readonly embedder: EmbeddingsProvider;
  readonly maxInputsPerCall: number;
  readonly acceptsDimensions: boolean;
}

/** One alias's targets and what a request on it needs to know of them, once per configuration. */
interface AliasRecord {
  readonly targets: readonly TargetRecord[];
  /** Each distinct target's price (by id), in config order. */
  readonly prices: readonly (Price | null)[];
  /** The alias's cap on output tokens, or null. */
  readonly maxOutputTokens: number | null;
  /** Tokens the alias's reservation counts per image. */
  readonly imageTokens: number;
  /** True when some target's adapter may refuse a request it cannot express (checked before any call). */
  readonly mayRefuse: boolean;
  /** True when some target's adapter may refuse a request from another door (ChatProvider.refusesOnlyDoorRequests). */
  readonly mayRefuseDoorRequests: boolean;
}

export interface TargetPlan {
  targets: UpstreamTarget[];
  maxOutputTokens: number;
  clamped: boolean;
  /** Every target's price, in config order (the reservation and the priced check). */
  prices: readonly (Price | null)[];
  /** Tokens the reservation counts per image on this alias. */
  imageTokens: number;
}

export interface AliasTargets {
  /** False when every target of the alias has an open circuit breaker. */
  isAvailable(alias: string): boolean;
  /** The upstream request for each target of `alias`, in config order, with
   * the refusal of each target that cannot take it. Throws the client's 400
   * (InvalidRequestError) when no target can, before anything is sent, and
   * first hands `onRefusedByAll` the refusals with the targets' ids (for the
   * access line: the 400 names targets by position and provider type only). */
  plan(alias: string, request: ChatRequest, onRefusedByAll?: (refusals: readonly TargetRefusal[]) => void): TargetPlan;
  /** The targets of embeddings alias `alias` for `request`, in config order, each with its refusal
   * (a `dimensions` its model does not take). Throws the client's 400 when no target can take it. */
  planEmbeddings(alias: string, request: EmbeddingsRequest, onRefusedByAll?: (refusals: readonly TargetRefusal[]) => void): EmbeddingsPlan;
  /** Circuit state of every target (provider/model), for the dashboard, /metrics and /readyz. */
  health(): TargetHealth[];
}

export interface EmbeddingsPlan {
  targets: EmbeddingsTarget[];
  /** Every target's price, in config order (the reservation and the priced check). */
  prices: readonly (Price | null)[];
}

export interface TargetHealth {
  /** `provider/model`, as in the access log. */
  id: string;
  provider: string;
  model: string;
  circuit: BreakerState;
  /** Epoch milliseconds the circuit last opened; null while it never has. */
  openedAt: number | null;
  /** Epoch milliseconds an open circuit lets a probe through; null unless open. */
  probeAt: number | null;
  /** The last counted failure and what went wrong on the wire; null while none. */
  lastFailure: RecordedFailure | null;
}

const NO_RETRY: RetryPolicy = { ...DEFAULT_RETRY_POLICY, maxAttempts: 1 };
// The demo never fails for upstream reasons; its breaker can never open.
const DEMO_BREAKER = { failureThreshold: Number.MAX_SAFE_INTEGER, openMs: 1000 };

export function createAliasTargets(config: GatewayConfig, bindings: ReadonlyMap<string, ProviderBinding>, clock: () => number = Date.now): AliasTargets {
  // One registry per provider, since the breaker options are the provider's;
  // its breakers are keyed by provider/model, so each target id has exactly one.
  const registries = new Map<string, BreakerRegistry>();
  const health: Array<Pick<TargetHealth, 'id' | 'provider' | 'model'> & { breaker: CircuitBreaker }> = [];
  const byAlias = new Map<string, AliasRecord>();
  for (const [alias, aliasConfig] of Object.entries(config.aliases)) {
    const targets = aliasConfig.targets.map((t, index): TargetRecord => {
      const binding = bindings.get(t.provider);
      if (binding === undefined) throw new Error(`no provider bound for ${t.provider}`);
      const id = `${t.provider}/${t.model}`;
      let registry = registries.get(t.provider);
      if (registry === undefined) {
        registry = createBreakerRegistry(binding.policy?.circuitBreaker ?? DEMO_BREAKER, clock);
        registries.set(t.provider, registry);
      }
      const breaker = registry.get(id);
      if (!health.some((h) => h.id === id)) health.push({ id, provider: t.provider, model: t.model, breaker });
      return {
        id,
        label: targetLabel(index + 1, typeOf(config.providers[t.provider])),
        provider: binding.provider,
        model: t.model,
        priority: t.priority,
        weight: t.weight,
        maxTokensParam: binding.maxTokensParam,
        price: t.price,
        retry: binding.policy === null ? NO_RETRY : { ...binding.policy.retry },
        breaker,
        embeddings: aliasConfig.kind === 'embeddings' ? embeddingsSettings(t, binding, config.providers[t.provider]) : null,
      };
    });
    // A provider/model listed twice is one target to the breaker, the log and the charge: the last entry's price is its price.
    const priceById = new Map<string, Price | null>();
    for (const t of targets) priceById.set(t.id, t.price);
    for (let i = 0; i < targets.length; i++) {
      const t = targets[i] as TargetRecord;
      targets[i] = { ...t, price: priceById.get(t.id) ?? null };
    }
    byAlias.set(alias, {
      targets,
      prices: [...priceById.values()],
      maxOutputTokens: aliasConfig.maxOutputTokens ?? null,
      imageTokens: aliasConfig.imageTokens ?? 0,
      mayRefuse: targets.some((t) => t.provider.refusal !== undefined && t.provider.refusesOnlyDoorRequests !== true),
      mayRefuseDoorRequests: targets.some((t) => t.provider.refusal !== undefined),
    });
  }
  const recordOf = (alias: string): AliasRecord => {
    const record = byAlias.get(alias);
    if (record === undefined) throw new Error(`unknown alias ${alias}`);
    return record;
  };

  return {
    isAvailable: (alias) => anyTargetAvailable(recordOf(alias).targets),
    health: () =>
      health.map(({ id, provider, model, breaker }) => {
        const { state, openedAt, probeAt, lastFailure } = breaker.snapshot();
        return { id, provider, model, circuit: state, openedAt, probeAt, lastFailure };
      }),
    plan(alias, request, onRefusedByAll) {
      const record = recordOf(alias);
      const cap = record.maxOutputTokens;
      const requested = request.max_completion_tokens ?? request.max_tokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
      const clamped = cap !== null && requested > cap;
      const maxOutputTokens = clamped ? cap : requested;
      const targets: UpstreamTarget[] = [];
      let refusals: TargetRefusal[] | null = null;
      // Only an adapter that can refuse needs the upstream request before the
      // first attempt; one that refuses only requests of another door (Messages,
      // Responses), only for those.
      const ask = record.mayRefuse || (record.mayRefuseDoorRequests && hasDoorOrigin(request));
      for (const t of record.targets) {
        const planned = new PlannedTarget(t, request, cap);
        if (ask) {
          const refusal = t.provider.refusal?.(planned.request) ?? null;
          planned.refusal = refusal;
          if (refusal !== null) (refusals ??= []).push({ targetId: t.id, label: t.label, refusal });
        }
        targets.push(planned);
      }
      if (refusals !== null && refusals.length === targets.length) {
        onRefusedByAll?.(refusals);
        throw everyTargetRefused(alias, refusals);
      }
      return { targets, maxOutputTokens, clamped, prices: record.prices, imageTokens: record.imageTokens };
    },
    planEmbeddings(alias, request, onRefusedByAll) {
      const record = recordOf(alias);
      const targets: EmbeddingsTarget[] = [];
      let refusals: TargetRefusal[] | null = null;
      for (const t of record.targets) {
        const embeddings = t.embeddings;
        if (embeddings === null) throw new Error(`alias ${alias} is not an embeddings alias`);
        const refusal = dimensionsRefusal(alias, request.dimensions, embeddings);
        if (refusal !== null) (refusals ??= []).push({ targetId: t.id, label: t.label, refusal });
        targets.push({
          id: t.id,
          priority: t.priority,
          weight: t.weight,
          retry: t.retry,
          breaker: t.breaker,
          price: t.price,
          refusal,
          embedder: embeddings.embedder,
          model: t.model,
          maxInputsPerCall: embeddings.maxInputsPerCall,
          acceptsDimensions: embeddings.acceptsDimensions,
        });
      }
      if (refusals !== null && refusals.length === targets.length) {
        onRefusedByAll?.(refusals);
        // Every target refuses alike: one message, naming the alias.
        throw (refusals[0] as TargetRefusal).refusal;
      }
      return { targets, prices: record.prices };
    },
  };
}

function embeddingsSettings(t: TargetConfig, binding: ProviderBinding, provider: ProviderConfig | undefined): EmbeddingsSettings {
  const embedder = binding.embedder ?? null;
  // The config refuses such a target; a binding built without an embedder is a programming error.
  if (embedder === null) throw new Error(`provider ${t.provider} has no embeddings`);
  return { embedder, maxInputsPerCall: maxInputsPerCall(t, provider), acceptsDimensions: t.acceptsDimensions };
}

/** Why a target cannot take the request's `dimensions`, or null when it can (or none is given). */
function dimensionsRefusal(alias: string, dimensions: number | null, target: EmbeddingsSettings): InvalidRequestError | null {
  if (dimensions === null) return null;
  if (!target.acceptsDimensions) {
    return new InvalidRequestError(
      `'dimensions' is not supported by model '${alias}': its upstream model returns vectors of one fixed width. Leave 'dimensions' out, or use a model that takes it.`,
      'dimensions',
      'unsupported_parameter',
    );
  }
  const { embedder } = target;
  if (embedder.kind === ProviderKind.Local && dimensions > embedder.maxDimensions) {
    return new InvalidRequestError(`'dimensions' is at most ${embedder.maxDimensions} for model '${alias}'; got ${dimensions}.`, 'dimensions', 'invalid_value');
  }
  return null;
}

/** A target as one request's plan sees it: its record, and its upstream request, built on first use. */
class PlannedTarget implements UpstreamTarget {
  readonly #record: TargetRecord;
  readonly #clientRequest: ChatRequest;
  readonly #cap: number | null;
  #request: ChatRequest | null = null;
  refusal: InvalidRequestError | null = null;

  constructor(record: TargetRecord, clientRequest: ChatRequest, cap: number | null) {
    this.#record = record;
    this.#clientRequest = clientRequest;
    this.#cap = cap;
  }

  get id(): string {
    return this.#record.id;
  }
  get provider(): ChatProvider {
    return this.#record.provider;
  }
  get priority(): number {
    return this.#record.priority;
  }
  get weight(): number {
    return this.#record.weight;
  }
  get retry(): RetryPolicy {
    return this.#record.retry;
  }
  get breaker(): CircuitBreaker {
    return this.#record.breaker;
  }
  get price(): Price | null {
    return this.#record.price;
  }
  /** The upstream request for this target (its model name and max-tokens field), made once. */
  get request(): ChatRequest {
    if (this.#request === null) {
      const r = this.#record;
      this.#request = buildUpstreamRequest(this.#clientRequest, { model: r.model, maxOutputTokens: this.#cap, maxTokensParam: r.maxTokensParam }).request;
    }
    return this.#request;
  }
}

/** A target's provider type as its config named it (a host type by its own name). */
function typeOf(provider: ProviderConfig | undefined): string {
  return provider === undefined ? 'unknown' : providerTypeName(provider);
}
