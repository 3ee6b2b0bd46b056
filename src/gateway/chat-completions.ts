// POST /v1/chat/completions as one pipeline, read top to bottom: authenticate,
// read and validate the body as it arrives, route (resolve the alias; the
// key's expiry and allowed aliases), admit (the key's limits), execute
// (dispatch to the alias's upstream targets), respond (JSON, or events through
// the stream pump), settle (usage and the limiter's permit, when the response
// closes). The request's lifetime (abort signal, client gone, shutdown,
// timing, access log) is the HTTP shell's RequestContext.
import type { GatewayConfig, Price } from '../config/config.ts';
import { createChatRequestObserver, validateChatRequest } from '../chat/request-validator.ts';
import type { Usage } from '../chat/types.ts';
import { ApiError } from '../errors/api-error.ts';
import { renderError } from '../errors/render.ts';
import { readRequestJson } from '../http/json-body.ts';
import { sendJson } from '../http/respond.ts';
import { ClientGoneAbort, SHUTDOWN_STREAM_MESSAGE, ShuttingDownError, type RequestContext, type RouteHandler } from '../http/request-context.ts';
import type { Logger } from '../log/logger.ts';
import { resolveAlias, type ResolvedAlias } from '../routing/alias-routing.ts';
import { createSseWriter, type SseWriter } from '../sse/sse-writer.ts';
import { AttemptOutcome, describeAttempt, dispatchCompletion, dispatchStream, wasAttempted, type AttemptRecord } from '../upstream/dispatcher.ts';
import type { UpstreamFailureLog } from '../upstream/failure-log.ts';
import type { UsageLedger } from '../usage/usage-ledger.ts';
import type { Limiter } from '../limits/limiter.ts';
import { reserveRequest, type Reservation } from '../limits/reservation.ts';
import { hasAnyLimit } from '../limits/key-limits.ts';
import type { GatewayMetrics } from '../metrics/gateway-metrics.ts';
import type { AliasRoutes } from '../routing/alias-targets.ts';
import { describeTargets, openChatTrace, type ChatTrace } from '../telemetry/chat-trace.ts';
import { createContextOnlyTracer, type Tracer } from '../telemetry/tracer.ts';
import type { Scheduler } from '../time/scheduler.ts';
import { authenticateRequest, type KeyAuthenticator } from './auth.ts';
import { pumpEventStream, type PumpControl } from './event-stream-pump.ts';
import { admitRequest, checkAlias, checkExpiry, KeyLimitRefusal, usableAliases, type KeyPolicy } from './key-policy.ts';
import type { PermitKeeper } from './permit-keeper.ts';
import { openAccounting, type Accounting } from './request-accounting.ts';
import { RequestPhase } from './request-charge.ts';

interface ChatCompletionsDeps {
  config: GatewayConfig;
  keys: KeyAuthenticator;
  routes: AliasRoutes;
  usage: UsageLedger;
  logger: Logger;
  limiter: Limiter;
  /** Renews the permits of running requests. */
  permits: PermitKeeper;
  metrics?: GatewayMetrics | undefined;
  /** The rate-limited "upstream failed" warn lines; none in some tests. */
  upstreamFailures?: UpstreamFailureLog | undefined;
  /** The clock (expiry, limits) and timers of this handler's requests. */
  scheduler: Scheduler;
  /** telemetry: the process's tracer; default: trace context only, nothing recorded. */
  tracer?: Tracer | undefined;
}

/** Response header naming the output-token maximum when an alias cap lowered it. */
const MAX_TOKENS_CLAMPED_HEADER = 'x-portcullis-max-tokens-clamped';
/** Response header naming the alias chosen and why: `service-vision; reason=image_url`. */
const ROUTE_HEADER = 'x-portcullis-route';

export function createChatCompletionsHandler(deps: ChatCompletionsDeps): RouteHandler {
  const { config, keys, routes, logger, metrics, upstreamFailures } = deps;
  const clock = deps.scheduler.now;
  const { maxBodyBytes, maxJsonDepth, maxStringBytes, maxMembers } = config.limits;
  const bodyOptions = { maxBytes: maxBodyBytes, limits: { maxDepth: maxJsonDepth, maxStringBytes, maxMembers } };
  const tracer = deps.tracer ?? createContextOnlyTracer();
  const describe = describeTargets(config);
  // The config is fixed for this handler's life: each alias's prices are looked up, never rebuilt, per request.
  const pricing = aliasPricing(config);
  const accountingDeps = { ...deps, clock, maxChargeMultiple: config.limits.maxChargeMultiple };

  return async (ctx) => {
    // telemetry: the server span, from the client's traceparent or a new trace
    const trace = openTracedRequest(ctx, tracer, describe);
    // authenticate
    const key = await authenticateRequest(ctx.req, keys, ctx.clientAddress);
    ctx.log['keyId'] = key.id;
    checkExpiry(key, clock());
    const accounting = openAccounting(ctx, key, accountingDeps);
    const stream: StreamState = { sse: undefined, endedForShutdown: false };
    ctx.onShutdown = () => endForShutdown(stream);
    // read and validate
    const body = await readRequestJson(ctx, { ...bodyOptions, observer: createChatRequestObserver() });
    // Ended (the client left, a shutdown) just as the body completed.
    if (ctx.signal.aborted) return;
    const request = validateChatRequest(body);
    // route
    const routeSpan = trace.startRoute();
    const route = resolveAlias(request, config, routes.isAvailable, () => usableAliases(key, config));
    logRoute(ctx, route, request.stream === true);
    trace.routed(routeSpan, route.alias, route.reason, request.stream === true);
    checkAlias(key, route.alias, request.model);
    const plan = routes.plan(route.alias, request, (refusals) => {
      // The client's 400 names targets by position and provider type; the operator's line names each one.
      ctx.log['attempts'] = refusals
        .map((r) => describeAttempt({ targetId: r.targetId, attempt: 0, outcome: AttemptOutcome.SkippedUnsupported, ...(r.refusal.param === null ? {} : { param: r.refusal.param }) }))
        .join(',');
    });
    const aliasConfig = config.aliases[route.alias];
    const { prices, list } = pricing.get(route.alias) ?? NO_PRICES;
    accounting.prices = list;
    accounting.reservation = reserveRequest(request, plan.maxOutputTokens, { imageTokens: aliasConfig?.imageTokens ?? 0 }, accounting.prices);
    checkPriced(key, route.alias, accounting.prices);
    // admit
    const admissionSpan = trace.startAdmission();
    const limitHeaders = await admit(ctx, accounting, deps, key, accounting.reservation, route.alias, clock).finally(() => {
      admissionSpan.setAttribute('portcullis.limit', ctx.log['limit'] as string | undefined);
      admissionSpan.end();
    });
    if (limitHeaders === null) return;
    const headers: Record<string, string> = { ...limitHeaders, [ROUTE_HEADER]: `${route.alias}; reason=${route.reason}` };
    if (plan.clamped) headers[MAX_TOKENS_CLAMPED_HEADER] = String(plan.maxOutputTokens);
    // execute and respond; charge and settle run when the response closes (request-accounting.ts)
    const attempts: string[] = [];
    /** The target that answered: the upstream-duration metric is by that target only. */
    let answeredBy: string | undefined;
    const dispatch = {
      requestId: ctx.requestId,
      signal: ctx.signal,
      scheduler: deps.scheduler,
      // A method of the trace (on its prototype): called on it, not detached.
      startAttempt: (targetId: string, attempt: number) => trace.startAttempt(targetId, attempt),
      onAttempt: (a: AttemptRecord) => {
        trace.attemptDone(a);
        metrics?.attempt(a.targetId, a.outcome);
        // The access line names the last target tried, so a request every
        // target failed still says where it went (`attempts` has the rest).
        if (wasAttempted(a.outcome)) {
          ctx.log['target'] = a.targetId;
          // Charged at the price of the last target tried: the one that answered, or gave an unusable answer.
          accounting.answeredPrice = prices.get(a.targetId) ?? null;
        }
        if (a.cause !== undefined && (a.outcome === AttemptOutcome.Retry || a.outcome === AttemptOutcome.Fallback)) {
          upstreamFailures?.note({ requestId: ctx.requestId, targetId: a.targetId, attempt: a.attempt, outcome: a.outcome, code: a.code, cause: a.cause });
        }
        if (attempts.length < 16) attempts.push(describeAttempt(a));
      },
    };
    const upstreamStarted = performance.now();
    accounting.phase = RequestPhase.Sent;
    try {
      if (request.stream === true) {
        const { stream: upstream, target } = await dispatchStream(plan.targets, dispatch);
        answeredBy = target.id;
        const relay = {
          alias: route.alias,
          includeUsage: request.stream_options?.include_usage === true,
          onUsage: (u: Usage) => accounting.noteUsage(u),
        };
        metrics?.streamStarted();
        try {
          const completed = await pumpEventStream(upstream, relay, streamControl(ctx, stream, accounting, headers, logger));
          if (completed) accounting.phase = RequestPhase.Answered;
        } finally {
          metrics?.streamEnded();
          trace.finishAttempt(traceResult(ctx));
        }
      } else {
        const { completion, target } = await dispatchCompletion(plan.targets, dispatch);
        answeredBy = target.id;
        accounting.phase = RequestPhase.Answered;
        if (completion.usage !== undefined) accounting.noteUsage(completion.usage);
        trace.responseModel(completion.model);
        completion.model = route.alias;
        trace.finishAttempt(traceResult(ctx));
        sendJson(ctx.res, 200, completion, headers);
      }
    } catch (err) {
      if (err instanceof ApiError) accounting.errorCode = err.code;
      // The client left, or a shutdown answered already: whatever the upstream
      // call ended with (the provider's abort error, the demo's abort reason),
      // there is no one to answer.
      if (ctx.signal.aborted) return;
      if (err instanceof ApiError) Object.assign(err.headers, headers);
      throw err;
    } finally {
      const upstreamMs = performance.now() - upstreamStarted;
      ctx.log['upstreamMs'] = Math.round(upstreamMs * 1000) / 1000;
      if (metrics !== undefined && answeredBy !== undefined) metrics.upstreamDone(answeredBy, upstreamMs / 1000);
      if (attempts.length > 1) ctx.log['attempts'] = attempts.join(',');
    }
  };
}

function logRoute(ctx: RequestContext, route: ResolvedAlias, stream: boolean): void {
  ctx.log['alias'] = route.alias;
  ctx.log['route'] = route.reason;
  if (route.skipped.length > 0) ctx.log['routeSkipped'] = route.skipped.join(',');
  ctx.log['stream'] = stream;
}

interface AliasPrices {
  /** Each target's price by its id (`provider/model`), in plan order. */
  readonly prices: ReadonlyMap<string, Price | null>;
  /** The same prices as a list, for the reservation and the priced check. */
  readonly list: readonly (Price | null)[];
}

const NO_PRICES: AliasPrices = { prices: new Map(), list: [] };

function aliasPricing(config: Pick<GatewayConfig, 'aliases'>): Map<string, AliasPrices> {
  const pricing = new Map<string, AliasPrices>();
  for (const [alias, { targets }] of Object.entries(config.aliases)) {
    const prices = new Map<string, Price | null>();
    for (const t of targets) prices.set(`${t.provider}/${t.model}`, t.price);
    pricing.set(alias, { prices, list: [...prices.values()] });
  }
  return pricing;
}

/** A key with a spending budget may only use aliases whose every target has a price: otherwise its cost would go uncounted. */
function checkPriced(key: KeyPolicy, alias: string, prices: readonly (Price | null)[]): void {
  if (key.limits.costBudget === null || prices.every((p) => p !== null)) return;
  throw new ApiError(
    'model_not_allowed',
    `This API key has a spending budget, and '${alias}' has no price in the gateway's config, so its cost could not be counted. Use another model, or ask the gateway's operator to set a price for '${alias}'.`,
    { param: 'model' },
  );
}

/**
 * The key's limits: the x-ratelimit-* headers for the answer, or null when the
 * client left (or a shutdown answered) while the limiter decided. A key without
 * limits skips the limiter (and its await) entirely.
 */
async function admit(
  ctx: RequestContext,
  accounting: Accounting,
  deps: ChatCompletionsDeps,
  key: KeyPolicy,
  reservation: Reservation,
  alias: string,
  clock: () => number,
): Promise<Record<string, string> | null> {
  if (!hasAnyLimit(key.limits)) return {};
  try {
    const admission = await admitRequest(deps.limiter, key, reservation, clock());
    if (admission.permit === null) return admission.headers;
    // The client left while the limiter decided: give the permit back now, unused, and stop.
    if (ctx.signal.aborted) {
      accounting.release(admission.permit);
      return null;
    }
    accounting.hold(admission.permit);
    return admission.headers;
  } catch (err) {
    if (err instanceof KeyLimitRefusal) {
      deps.metrics?.rateLimited(alias, err.refusal);
      ctx.log['limit'] = err.refusal;
    }
    throw err;
  }
}

/** What a shutdown needs to end a stream: its writer, once the first event started it. */
interface StreamState {
  sse: SseWriter | undefined;
  /** The shutdown wrote the error frame and ended the response: the pump only stops. */
  endedForShutdown: boolean;
}

/** The error frame that ends a stream cut by a shutdown. */
const SHUTDOWN_FRAME = renderError(new ShuttingDownError(SHUTDOWN_STREAM_MESSAGE)).body;

/**
 * The drain deadline passed with this request open: a started stream ends with
 * the shutdown error frame now (the shell aborts the upstream work next). A
 * request with nothing sent yet is answered 503 by the HTTP shell.
 */
function endForShutdown(stream: StreamState): void {
  const sse = stream.sse;
  if (sse === undefined || stream.endedForShutdown) return;
  stream.endedForShutdown = true;
  // A failed write means the client is gone: nothing more to tell it.
  sse.data(SHUTDOWN_FRAME).catch(() => undefined);
  sse.end();
}

/** The pump's view of this request: the SSE writer on its response, opened at the first event. */
function streamControl(ctx: RequestContext, stream: StreamState, accounting: Accounting, headers: Record<string, string>, logger: Logger): PumpControl {
  return {
    onRelay(relay) {
      accounting.relay = relay;
    },
    open() {
      accounting.phase = RequestPhase.Answering;
      const sse = createSseWriter(ctx.res);
      sse.start(headers);
      stream.sse = sse;
      return sse;
    },
    endedForShutdown: () => stream.endedForShutdown,
    // The socket may be gone before the response's 'close' (and the signal) follow.
    clientGone: () => ctx.signal.reason instanceof ClientGoneAbort || ctx.res.destroyed || ctx.res.socket === null || ctx.res.socket.destroyed,
    onStreamError(code, unexpected) {
      if (unexpected !== undefined) {
        logger.error('unexpected error mid-stream', { requestId: ctx.requestId, error: unexpected instanceof Error ? unexpected.name : typeof unexpected });
      }
      ctx.log['error'] = code;
    },
  };
}

// telemetry: the request's spans end when its response closes, however it ended.
function openTracedRequest(ctx: RequestContext, tracer: Tracer, describe: ReturnType<typeof describeTargets>): ChatTrace {
  const trace = openChatTrace(tracer, ctx.req.headers, ctx.requestId, describe);
  ctx.log['traceId'] = trace.traceId;
  ctx.onClose(() => trace.finish(traceResult(ctx)));
  return trace;
}

/** How the request stands, from its access-log fields (codes and counts only). */
function traceResult(ctx: RequestContext): Parameters<ChatTrace['finish']>[0] {
  const { log, res } = ctx;
  const tokens = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);
  return {
    status: res.headersSent ? res.statusCode : null,
    error: typeof log['error'] === 'string' ? log['error'] : undefined,
    promptTokens: tokens(log['promptTokens']),
    completionTokens: tokens(log['completionTokens']),
  };
}
