// POST /v1/chat/completions: authenticate, read and validate the body as it
// arrives, resolve the alias, apply the key's policy (expiry, allowed aliases,
// limits), dispatch to its upstream targets, answer in the spec's shapes, and
// account the usage to the key.
import type { ServerResponse } from 'node:http';
import type { GatewayConfig } from '../config/config.ts';
import { createChunkRelay, type RelayOptions } from '../chat/stream-relay.ts';
import { createChatRequestObserver, validateChatRequest } from '../chat/request-validator.ts';
import type { ChatCompletionChunk, Usage } from '../chat/types.ts';
import { ApiError, internalErrorBody } from '../errors.ts';
import { readRequestJson } from '../http/json-body.ts';
import { sendJson } from '../http/respond.ts';
import { SHUTDOWN_STREAM_MESSAGE, ShuttingDownError, type RequestContext, type RouteHandler } from '../http/server.ts';
import type { Logger } from '../log/logger.ts';
import { resolveAlias } from '../routing/alias-routing.ts';
import { createSseWriter, type SseWriter } from '../sse/sse-writer.ts';
import { dispatchCompletion, dispatchStream, type AttemptRecord } from '../upstream/dispatcher.ts';
import type { UsageLedger } from '../usage/usage-ledger.ts';
import type { Limiter, Permit } from '../limits/limiter.ts';
import { estimateRequestTokens } from '../limits/token-estimate.ts';
import { hasAnyLimit } from '../limits/key-limits.ts';
import type { GatewayMetrics } from '../metrics/gateway-metrics.ts';
import type { AliasRoutes } from '../routing/alias-targets.ts';
import { authenticateRequest, type KeyAuthenticator } from './auth.ts';
import { admitRequest, checkAlias, checkExpiry, KeyLimitRefusal, settledTokens } from './key-policy.ts';

export interface ChatCompletionsDeps {
  config: GatewayConfig;
  keys: KeyAuthenticator;
  routes: AliasRoutes;
  usage: UsageLedger;
  logger: Logger;
  limiter: Limiter;
  metrics?: GatewayMetrics | undefined;
  /** Milliseconds since the epoch, for expiry and limits. */
  clock?: () => number;
}

/** Response header naming the output-token maximum when an alias cap lowered it. */
export const MAX_TOKENS_CLAMPED_HEADER = 'x-portcullis-max-tokens-clamped';
/** Response header naming the alias chosen and why: `service-vision; reason=image_url`. */
export const ROUTE_HEADER = 'x-portcullis-route';

export function createChatCompletionsHandler(deps: ChatCompletionsDeps): RouteHandler {
  const { config, keys, routes, usage, logger, limiter, metrics } = deps;
  const clock = deps.clock ?? Date.now;
  const { maxBodyBytes, maxJsonDepth, maxStringBytes, maxMembers } = config.limits;
  const jsonLimits = { maxDepth: maxJsonDepth, maxStringBytes, maxMembers };

  return async (ctx) => {
    const { req, res } = ctx;
    // The upstream call lives only as long as the client is there to read it,
    // and no longer than a shutdown's drain deadline.
    const abort = new AbortController();
    const stream: StreamControl = { sse: undefined, endedForShutdown: false };
    ctx.onShutdown = () => endForShutdown(stream, abort);
    const key = authenticateRequest(req, keys);
    const keyId = key.id;
    ctx.log['keyId'] = keyId;
    checkExpiry(key, clock());
    // Every authenticated request is counted, rejected ones as errors.
    let completionUsage: Usage | undefined;
    // Set once the limiter admitted the request: settled when the answer is over, however it ends.
    let permit: Permit | null = null;
    let estimate = 0;
    const settle = (held: Permit, actualTokens: number): void => {
      limiter.settle({ permit: held, limits: key.limits, actualTokens, nowMs: clock() }).catch((err: unknown) => {
        logger.warn('rate-limit settlement failed; the permit lease will release it', { requestId: ctx.requestId, error: err instanceof Error ? err.name : typeof err });
      });
    };
    let closed = false;
    metrics?.requestStarted();
    res.once('close', () => {
      closed = true;
      metrics?.requestEnded();
      usage.record(keyId, { usage: completionUsage, error: res.statusCode >= 400 || ctx.log['error'] !== undefined });
      if (permit !== null) settle(permit, settledTokens(estimate, completionUsage?.total_tokens, res.headersSent && res.statusCode < 400));
    });
    const body = await readRequestJson(ctx, { maxBytes: maxBodyBytes, limits: jsonLimits, observer: createChatRequestObserver() });
    // Ended by a shutdown while the body arrived: it was answered 503 already.
    if (abort.signal.aborted) return;
    const request = validateChatRequest(body);
    const route = resolveAlias(request, config, routes.isAvailable);
    ctx.log['alias'] = route.alias;
    ctx.log['route'] = route.reason;
    if (route.skipped.length > 0) ctx.log['routeSkipped'] = route.skipped.join(',');
    ctx.log['stream'] = request.stream === true;
    checkAlias(key, route.alias, request.model);

    const plan = routes.plan(route.alias, request);
    // A key without limits skips the estimate and the limiter (and their await) entirely.
    let limitHeaders: Record<string, string> | undefined;
    if (hasAnyLimit(key.limits)) {
      estimate = estimateRequestTokens(request, plan.maxOutputTokens);
      try {
        const admission = await admitRequest(limiter, key, estimate, clock());
        // The client left (or a shutdown answered) while the limiter decided: the
        // close handler ran with no permit, so give it back now, unused, and stop.
        if (closed || abort.signal.aborted) {
          if (admission.permit !== null) settle(admission.permit, 0);
          return;
        }
        permit = admission.permit;
        limitHeaders = admission.headers;
      } catch (err) {
        if (err instanceof KeyLimitRefusal) {
          metrics?.rateLimited(route.alias, err.refusal);
          ctx.log['limit'] = err.refusal;
        }
        throw err;
      }
    }
    const headers: Record<string, string> = { ...limitHeaders, [ROUTE_HEADER]: `${route.alias}; reason=${route.reason}` };
    if (plan.clamped) headers[MAX_TOKENS_CLAMPED_HEADER] = String(plan.maxOutputTokens);

    const onClose = (): void => {
      if (!res.writableFinished) abort.abort(new ClientGoneAbort());
    };
    res.on('close', onClose);
    const attempts: string[] = [];
    const dispatch = {
      requestId: ctx.requestId,
      signal: abort.signal,
      onAttempt: (a: AttemptRecord) => {
        metrics?.attempt(a.targetId, a.outcome);
        if (attempts.length < 16) attempts.push(`${a.targetId}:${a.outcome}${a.status === undefined ? '' : `:${a.status}`}`);
      },
    };
    const noteUsage = (u: Usage): void => {
      completionUsage = u;
      ctx.log['promptTokens'] = u.prompt_tokens;
      ctx.log['completionTokens'] = u.completion_tokens;
      ctx.log['cachedTokens'] = u.prompt_tokens_details.cached_tokens;
    };
    const upstreamStarted = performance.now();
    try {
      if (request.stream === true) {
        const { stream: upstream, target } = await dispatchStream(plan.targets, dispatch);
        ctx.log['target'] = target.id;
        const relay = { alias: route.alias, includeUsage: request.stream_options?.include_usage === true, onUsage: noteUsage };
        metrics?.streamStarted();
        try {
          await writeEventStream(ctx, upstream, relay, headers, logger, stream);
        } finally {
          metrics?.streamEnded();
        }
      } else {
        const { completion, target } = await dispatchCompletion(plan.targets, dispatch);
        ctx.log['target'] = target.id;
        completion.model = route.alias;
        if (completion.usage !== undefined) noteUsage(completion.usage);
        sendJson(res, 200, completion, headers);
      }
    } catch (err) {
      // The client left, or a shutdown answered already: whatever the upstream
      // call ended with (the provider's abort error, the demo's abort reason),
      // there is no one to answer.
      if (abort.signal.aborted) return;
      if (err instanceof ApiError) Object.assign(err.headers, headers);
      throw err;
    } finally {
      const upstreamMs = performance.now() - upstreamStarted;
      ctx.log['upstreamMs'] = Math.round(upstreamMs * 1000) / 1000;
      const target = ctx.log['target'];
      if (metrics !== undefined && typeof target === 'string') metrics.upstreamDone(target, upstreamMs / 1000);
      if (attempts.length > 1) ctx.log['attempts'] = attempts.join(',');
      res.off('close', onClose);
      if (abort.signal.reason instanceof ClientGoneAbort) ctx.log['clientGone'] = true;
    }
  };
}

/** The abort reason used when a shutdown's drain deadline ends the request. */
export class ShutdownAbort extends Error {
  override name = 'ShutdownAbort';
  constructor() {
    super('the gateway is shutting down');
  }
}

/** What a shutdown needs to end a stream: its writer, once the first event started it. */
interface StreamControl {
  sse: SseWriter | undefined;
  /** The shutdown wrote the error frame and ended the response: the relay loop only stops. */
  endedForShutdown: boolean;
}

/** The error frame that ends a stream cut by a shutdown. */
const SHUTDOWN_FRAME = JSON.stringify(new ShuttingDownError(SHUTDOWN_STREAM_MESSAGE).toBody());

/**
 * The drain deadline passed with this request open: stop the upstream work and,
 * when a stream has started, end it with the shutdown error frame now rather
 * than when the upstream notices the abort (it might not, or only late). A
 * request with nothing sent yet is answered 503 by the HTTP shell after this.
 */
function endForShutdown(stream: StreamControl, abort: AbortController): void {
  const sse = stream.sse;
  if (sse !== undefined && !stream.endedForShutdown) {
    stream.endedForShutdown = true;
    // A failed write means the client is gone: nothing more to tell it.
    sse.data(SHUTDOWN_FRAME).catch(() => undefined);
    sse.end();
  }
  abort.abort(new ShutdownAbort());
}

/** The abort reason used when the client disconnects. */
export class ClientGoneAbort extends Error {
  override name = 'ClientGoneAbort';
  constructor() {
    super('the client closed the connection');
  }
}

/**
 * Streams as server-sent events, relaying the upstream's chunks under
 * ../chat/stream-relay.ts's rules. Nothing is sent before the first relayed
 * chunk, so an error before it is an ordinary JSON error (the boundary renders
 * it); after the first byte it is a `data: {"error":...}` frame and the end,
 * never a clean `[DONE]`.
 *
 * The chunk relay is driven here rather than through relayChatStream: one
 * async step per upstream chunk instead of two, and every chunk an upstream
 * chunk yields is written without waiting in between (the writer queues them
 * for one socket write and holds us only when the socket needs draining).
 */
async function writeEventStream(
  ctx: RequestContext,
  source: AsyncIterable<ChatCompletionChunk>,
  options: RelayOptions,
  headers: Record<string, string>,
  logger: Logger,
  control: StreamControl,
): Promise<void> {
  const chunks = source[Symbol.asyncIterator]();
  const relay = createChunkRelay(options);
  let sse: SseWriter | undefined;
  let upstreamFailed = false;
  const start = (): SseWriter => {
    const started = startEventStream(ctx, headers);
    control.sse = started;
    return started;
  };
  try {
    for (;;) {
      let next: IteratorResult<ChatCompletionChunk>;
      try {
        next = await chunks.next();
      } catch (err) {
        // A failed iterator is closed already; only the relay's own errors
        // below leave it open.
        upstreamFailed = true;
        throw err;
      }
      if (next.done === true) break;
      // A shutdown ended the response while the chunk was on its way.
      if (control.endedForShutdown) throw new ShutdownAbort();
      const out = relay.push(next.value);
      for (let i = 0; i < out.length; i++) {
        sse ??= start();
        await sse.data(JSON.stringify(out[i]));
      }
    }
    const usage = relay.usage;
    if (usage !== undefined) options.onUsage?.(usage);
    const trailing = relay.end();
    sse ??= start();
    for (let i = 0; i < trailing.length; i++) await sse.data(JSON.stringify(trailing[i]));
    await sse.data('[DONE]');
    sse.end();
  } catch (err) {
    if (!upstreamFailed) await chunks.return?.(undefined).catch(() => undefined);
    // Before the first event the caller's error boundary answers in JSON.
    if (sse === undefined) throw err;
    // The shutdown frame is the stream's last word.
    if (control.endedForShutdown || clientGone(ctx.res)) return;
    if (!(err instanceof ApiError)) {
      logger.error('unexpected error mid-stream', { requestId: ctx.requestId, error: err instanceof Error ? err.name : typeof err });
    }
    ctx.log['error'] = err instanceof ApiError ? (err.code ?? err.type) : 'internal_error';
    const body = err instanceof ApiError ? err.toBody() : internalErrorBody();
    try {
      await sse.data(JSON.stringify(body));
    } finally {
      sse.end();
    }
  }
}

function startEventStream(ctx: RequestContext, headers: Record<string, string>): SseWriter {
  const sse = createSseWriter(ctx.res);
  sse.start(headers);
  return sse;
}

function clientGone(res: ServerResponse): boolean {
  return res.destroyed || res.socket === null || res.socket.destroyed;
}
