// Binds each alias to its upstream targets: the provider adapter, the
// retry policy and one circuit breaker per provider+model, shared by every
// alias that uses the same pair.
import type { GatewayConfig, MaxTokensParam, UpstreamPolicy } from '../config/config.ts';
import type { ChatRequest } from '../chat/types.ts';
import { buildUpstreamRequest } from '../chat/upstream-request.ts';
import type { ChatProvider } from '../upstream/provider.ts';
import { createBreakerRegistry, type BreakerRegistry, type CircuitBreaker, type RecordedFailure, type State as BreakerState } from '../upstream/circuit-breaker.ts';
import { anyTargetAvailable, type UpstreamTarget } from '../upstream/dispatcher.ts';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../upstream/retry-policy.ts';
import { everyTargetRefused, targetLabel, type TargetRefusal } from './target-refusals.ts';

export interface ProviderBinding {
  provider: ChatProvider;
  maxTokensParam: MaxTokensParam;
  /** null for the demo provider: nothing to retry or break. */
  policy: UpstreamPolicy | null;
}

interface BoundTarget {
  id: string;
  /** The client's name for it (./target-refusals.ts targetLabel). */
  label: string;
  provider: ChatProvider;
  model: string;
  priority: number;
  weight: number;
  maxTokensParam: MaxTokensParam;
  retry: RetryPolicy;
  breaker: CircuitBreaker;
}

export interface TargetPlan {
  targets: UpstreamTarget[];
  maxOutputTokens: number;
  clamped: boolean;
}

export interface AliasRoutes {
  /** False when every target of the alias has an open circuit breaker. */
  isAvailable(alias: string): boolean;
  /** The upstream request for each target of `alias`, in config order, with
   * the refusal of each target that cannot take it. Throws the client's 400
   * (InvalidRequestError) when no target can, before anything is sent, and
   * first hands `onRefusedByAll` the refusals with the targets' ids (for the
   * access line: the 400 names targets by position and provider type only). */
  plan(alias: string, request: ChatRequest, onRefusedByAll?: (refusals: readonly TargetRefusal[]) => void): TargetPlan;
  /** Circuit state of every target (provider/model), for the dashboard, /metrics and /readyz. */
  health(): TargetHealth[];
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

export function createAliasRoutes(config: GatewayConfig, bindings: ReadonlyMap<string, ProviderBinding>, clock: () => number = Date.now): AliasRoutes {
  // One registry per provider, since the breaker options are the provider's;
  // its breakers are keyed by provider/model, so each target id has exactly one.
  const registries = new Map<string, BreakerRegistry>();
  const health: Array<Pick<TargetHealth, 'id' | 'provider' | 'model'> & { breaker: CircuitBreaker }> = [];
  const byAlias = new Map<string, BoundTarget[]>();
  for (const [alias, aliasConfig] of Object.entries(config.aliases)) {
    byAlias.set(
      alias,
      aliasConfig.targets.map((t, index) => {
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
          label: targetLabel(index + 1, config.providers[t.provider]?.type ?? 'unknown'),
          provider: binding.provider,
          model: t.model,
          priority: t.priority,
          weight: t.weight,
          maxTokensParam: binding.maxTokensParam,
          retry: binding.policy === null ? NO_RETRY : { ...binding.policy.retry },
          breaker,
        };
      }),
    );
  }
  const targetsOf = (alias: string): BoundTarget[] => {
    const targets = byAlias.get(alias);
    if (targets === undefined) throw new Error(`unknown alias ${alias}`);
    return targets;
  };

  return {
    isAvailable: (alias) => anyTargetAvailable(targetsOf(alias)),
    health: () =>
      health.map(({ id, provider, model, breaker }) => {
        const { state, openedAt, probeAt, lastFailure } = breaker.snapshot();
        return { id, provider, model, circuit: state, openedAt, probeAt, lastFailure };
      }),
    plan(alias, request, onRefusedByAll) {
      const cap = config.aliases[alias]?.maxOutputTokens ?? null;
      let maxOutputTokens = 0;
      let clamped = false;
      const refusals: TargetRefusal[] = [];
      const targets = targetsOf(alias).map((t): UpstreamTarget => {
        const p = buildUpstreamRequest(request, { model: t.model, maxOutputTokens: cap, maxTokensParam: t.maxTokensParam });
        maxOutputTokens = p.maxOutputTokens;
        clamped = p.clamped;
        const refusal = t.provider.refusal?.(p.request) ?? null;
        if (refusal !== null) refusals.push({ targetId: t.id, label: t.label, refusal });
        return { id: t.id, provider: t.provider, priority: t.priority, weight: t.weight, request: p.request, retry: t.retry, breaker: t.breaker, refusal };
      });
      if (refusals.length === targets.length) {
        onRefusedByAll?.(refusals);
        throw everyTargetRefused(alias, refusals);
      }
      return { targets, maxOutputTokens, clamped };
    },
  };
}
