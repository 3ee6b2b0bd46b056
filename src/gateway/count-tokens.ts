// POST /v1/messages/count_tokens: how many input tokens a Messages request
// would take on the alias the client names. The count comes from the alias's
// first target where its provider can count (Anthropic's own count_tokens,
// vLLM's or llama.cpp's tokenizer: ../providers/token-count.ts), otherwise, or
// when that count fails, from the gateway's documented estimate
// (../messages/token-estimate.ts); the `x-portcullis-token-count` header says
// which (`upstream` or `estimate`). Never 0 for a non-empty request.
// The key's policy applies as on the Messages door: expiry, allowed aliases,
// and its request-rate and concurrency limits (a count is admitted as a
// request that reserves no tokens and no money, and is never charged:
// Anthropic does not bill count_tokens either).
import { setMessagesOrigin } from '../chat/messages-origin.ts';
import type { GatewayConfig } from '../config/config.ts';
import { readRequestJson } from '../http/json-body.ts';
import { sendJson } from '../http/respond.ts';
import type { RequestGuard } from './request-guard.ts';
import type { RouteHandler } from '../http/request-context.ts';
import { hasAnyLimit } from '../limits/key-limits.ts';
import type { Limiter } from '../limits/limiter.ts';
import type { Logger } from '../log/logger.ts';
import { passthroughFields, validateCountTokensRequest } from '../messages/message-request-validator.ts';
import { toChatRequest } from '../messages/message-to-chat.ts';
import { countTokens } from '../providers/token-count.ts';
import { resolveAlias } from '../routing/alias-routing.ts';
import type { AliasTargets } from '../routing/alias-targets.ts';
import type { Scheduler } from '../time/scheduler.ts';
import { authenticateRequest, type KeyAuthenticator } from './auth.ts';
import { betasOf, versionOf } from './messages-endpoint.ts';
import { admitRequest, checkAlias, checkExpiry, usableAliases } from './key-policy.ts';
import type { PermitKeeper } from './permit-keeper.ts';

/** The response header naming where the count came from: `upstream` or `estimate`. */
export const TOKEN_COUNT_HEADER = 'x-portcullis-token-count';

export interface CountTokensDeps {
  config: GatewayConfig;
  keys: KeyAuthenticator;
  targets: AliasTargets;
  limiter: Limiter;
  permits: PermitKeeper;
  scheduler: Scheduler;
  logger: Logger;
  /** Top-level fields some Anthropic provider passes through unchecked. */
  extraFields: ReadonlySet<string>;
  /** The egress guard of this configuration. */
  guard?: RequestGuard | undefined;
}

const NO_CHARGE = { tokens: 0, costNanos: 0 };

/** The validated count_tokens body, and its request as a Messages request's chat shape. */
function countedRequest(counted: ReturnType<typeof validateCountTokensRequest>, version: string | undefined, betas: ReturnType<typeof betasOf>, extraFields: ReadonlySet<string>): { record: Record<string, unknown>; request: ReturnType<typeof toChatRequest>['request'] } {
  const record = counted as unknown as Record<string, unknown>;
  const { request, untranslatable } = toChatRequest(counted as unknown as Parameters<typeof toChatRequest>[0]);
  setMessagesOrigin(request, { body: record, untranslatable, version, betas, extraFields: passthroughFields(record, 'count_tokens') });
  return { record, request };
}

export function createCountTokensHandler(deps: CountTokensDeps): RouteHandler {
  const { config, keys, targets, limiter, permits, scheduler, logger, extraFields } = deps;
  const { maxBodyBytes, maxJsonDepth, maxStringBytes, maxMembers } = config.limits;
  const limits = { maxDepth: maxJsonDepth, maxStringBytes, maxMembers };
  return async (ctx) => {
    const found = authenticateRequest(ctx.req, keys, ctx.clientAddress, 'anthropic', 'count_tokens');
    const key = found instanceof Promise ? await found : found;
    ctx.log['keyId'] = key.id;
    checkExpiry(key, scheduler.now());
    const version = versionOf(ctx.req.headers);
    const betas = betasOf(ctx.req.headers);
    const body = await readRequestJson(ctx, { maxBytes: maxBodyBytes, limits });
    if (ctx.aborted) return;
    const options = version === undefined ? { extraFields } : { extraFields, version };
    let { record, request } = countedRequest(validateCountTokensRequest(body, options), version, betas, extraFields);
    const route = resolveAlias(request, config, targets.isAvailable, () => usableAliases(key, config));
    ctx.log['alias'] = route.alias;
    checkAlias(key, route.alias, request.model);
    // The body goes to the upstream's own counter: the egress guard checks it as it checks a Messages request.
    const guarded = deps.guard?.needed(key) === true ? deps.guard.inspect({ log: ctx.log, requestId: ctx.requestId, logger }, body, route.alias, key) : body;
    if (guarded !== body) ({ record, request } = countedRequest(validateCountTokensRequest(guarded, options), version, betas, extraFields));
    // The first target that can take the request counts it (a Messages request an OpenAI-compatible target refuses is counted where it would be sent).
    const planned = targets.plan(route.alias, request).targets;
    const target = planned.find((t) => t.refusal === undefined || t.refusal === null) ?? planned[0];
    if (target === undefined) throw new Error(`alias ${route.alias} has no target`);
    const admission = hasAnyLimit(key.limits) ? await admitRequest(limiter, key, NO_CHARGE, scheduler.now()) : null;
    const permit = admission?.permit ?? null;
    if (permit !== null) permits.hold(permit);
    try {
      const count = await countTokens(target, record, { signal: ctx, requestId: ctx.requestId });
      ctx.log['tokenCount'] = count.source;
      ctx.log['tokenCountMethod'] = count.method;
      if (count.problem !== undefined) ctx.log['tokenCountProblem'] = count.problem;
      // Not promptTokens: nothing was sent for an answer, and the token metrics count answers only.
      ctx.log['countedTokens'] = count.inputTokens;
      if (ctx.aborted) return;
      sendJson(ctx.res, 200, { input_tokens: count.inputTokens }, { ...admission?.headers, [TOKEN_COUNT_HEADER]: count.source });
    } finally {
      if (permit !== null) {
        permits.release(permit);
        const requestId = ctx.requestId;
        // The permit is given back whatever happens: a failed settlement leaves it to its lease.
        Promise.resolve()
          .then(() => limiter.settle({ permit, limits: key.limits, charge: NO_CHARGE, nowMs: scheduler.now(), maxChargeMultiple: config.limits.maxChargeMultiple }))
          .catch((err: unknown) => {
            logger.warn('rate-limit settlement failed; the permit lease will release it', { requestId, error: err instanceof Error ? err.name : typeof err });
          });
      }
    }
  };
}
