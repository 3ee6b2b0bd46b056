// Everything the request handlers derive from one configuration: upstream
// credentials, provider adapters, alias routes (with fresh circuit breakers)
// and the handlers bound to them. Built whole before it is used, so a reload
// either gets a complete new state or keeps the old one.
import type { GatewayConfig } from '../config/config.ts';
import type { RouteHandler } from '../http/request-context.ts';
import type { Logger } from '../log/logger.ts';
import { connectionWorthLogging, resolveProviderConnections } from '../providers/provider-connections.ts';
import { createProviderBinding } from '../providers/provider-factories.ts';
import type { UsageLedger } from '../usage/usage-ledger.ts';
import type { Limiter } from '../limits/limiter.ts';
import type { PermitKeeper } from './permit-keeper.ts';
import type { GatewayMetrics } from '../metrics/gateway-metrics.ts';
import { createAliasTargets, type AliasTargets, type ProviderBinding } from '../routing/alias-targets.ts';
import type { UpstreamFailureLog } from '../upstream/failure-log.ts';
import type { Tracer } from '../telemetry/tracer.ts';
import type { Scheduler } from '../time/scheduler.ts';
import type { KeyAuthenticator } from './auth.ts';
import type { ResponseStore } from '../state/response-store-port.ts';
import type { ProviderKeySource } from '../api/ports.ts';
import { upstreamKeys } from './provider-keys.ts';
import { createChatCompletionsEndpoint } from './chat-endpoint.ts';
import { createFieldPolicy } from '../chat/request-fields.ts';
import { createCountTokensHandler } from './count-tokens.ts';
import { createMessagesEndpoint } from './messages-endpoint.ts';
import { createResponsesEndpoint } from './responses-endpoint.ts';
import { messagesPassthroughFields } from '../config/anthropic-passthrough-config.ts';
import { responsesPassthroughFields } from '../config/responses-passthrough-config.ts';
import { createEndpointHandler } from './pipeline.ts';
import { createEmbeddingsHandler } from './embeddings-endpoint.ts';
import { createRequestGuard } from './request-guard.ts';
import { mixedEmbeddingsModels } from '../config/alias-kind-config.ts';
import { createModelsHandler } from './models.ts';

export interface ServingState {
  readonly config: GatewayConfig;
  readonly targets: AliasTargets;
  readonly chat: RouteHandler;
  /** POST /v1/messages: Anthropic's Messages door on the same pipeline. */
  readonly messages: RouteHandler;
  /** POST /v1/responses: OpenAI's Responses door on the same pipeline. */
  readonly responses: RouteHandler;
  /** POST /v1/messages/count_tokens. */
  readonly countTokens: RouteHandler;
  /** POST /v1/embeddings. */
  readonly embeddings: RouteHandler;
  readonly models: RouteHandler;
}

export interface ServingDeps {
  keys: KeyAuthenticator;
  /** The gateway's response store, when responses.store is on (opened once, kept across reloads). */
  responseStore?: ResponseStore | undefined;
  usage: UsageLedger;
  logger: Logger;
  env: NodeJS.ProcessEnv;
  limiter: Limiter;
  /** Renews the limiter permits of running requests; one for the process, kept across reloads. */
  permits: PermitKeeper;
  metrics?: GatewayMetrics | undefined;
  /** Kept across reloads, so a reload does not reset its rate limit. */
  upstreamFailures?: UpstreamFailureLog | undefined;
  /** The clock and timers of everything built here (expiry, limits, breakers, upstream exchanges). */
  scheduler: Scheduler;
  /** telemetry: kept across reloads, like the metrics. */
  tracer?: Tracer | undefined;
  /** The host's upstream keys, asked on every exchange over the config's (./provider-keys.ts). */
  providerKey?: ProviderKeySource | undefined;
}

/**
 * Throws ConfigError when an upstream credential (apiKeyEnv, apiKeyFile) is
 * missing, a provider's TLS file is unusable or an egress proxy cannot be
 * used (./provider-connections.ts); reads credential and TLS files
 * again each time, so a reload picks up a rotated key or certificate (a host's
 * key source is asked on every exchange instead).
 */
export function buildServingState(config: GatewayConfig, deps: ServingDeps, loadedAt: number): ServingState {
  const apiKeys = upstreamKeys(config, deps.env, deps.providerKey, deps.logger);
  const connections = resolveProviderConnections(config, deps.env);
  const bindings = new Map<string, ProviderBinding>();
  for (const [name, provider] of Object.entries(config.providers)) {
    const connection = connections.get(name);
    bindings.set(name, createProviderBinding(provider, apiKeys.get(name), connection, deps.scheduler));
    if (connection !== undefined && connectionWorthLogging(connection)) {
      deps.logger.info('upstream connection', {
        provider: name,
        transport: connection.transportForProxy ? 'node (chosen: fetch cannot use a proxy)' : connection.transport,
        route: connection.proxy.description,
      });
      for (const note of connection.proxy.notes) deps.logger.warn('upstream proxy setting ignored', { provider: name, note });
    }
  }
  const targets = createAliasTargets(config, bindings, deps.scheduler.now);
  for (const { alias, models } of mixedEmbeddingsModels(config)) {
    deps.logger.warn('an embeddings alias has targets of different models: vectors from one cannot be compared with vectors from another', { alias, models: models.join(',') });
  }
  const policy = createFieldPolicy(config);
  const extraFields = messagesPassthroughFields(config);
  const guard = createRequestGuard(config);
  const pipeline = { config, targets, ...deps, maxChargeMultiple: config.limits.maxChargeMultiple, guard };
  return {
    config,
    targets,
    chat: createEndpointHandler(createChatCompletionsEndpoint(policy), pipeline),
    messages: createEndpointHandler(createMessagesEndpoint({ extraFields, policy }), pipeline),
    responses: createEndpointHandler(createResponsesEndpoint({ extraFields: responsesPassthroughFields(config), policy, now: deps.scheduler.now, store: deps.responseStore, onStoreProblem: (problem) => deps.logger.warn('a response was not stored', { problem }) }), pipeline),
    countTokens: createCountTokensHandler({ config, keys: deps.keys, targets, limiter: deps.limiter, permits: deps.permits, scheduler: deps.scheduler, logger: deps.logger, extraFields, guard }),
    embeddings: createEmbeddingsHandler(pipeline),
    models: createModelsHandler(config, policy, deps.keys, loadedAt, deps.scheduler.now),
  };
}
