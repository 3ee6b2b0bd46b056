// POST /v1/chat/completions: authenticate, read and validate the body as it
// arrives, resolve the alias, dispatch to its upstream targets, answer in the
// spec's shapes, and account the usage to the key.
import type { ServerResponse } from 'node:http';
import type { GatewayConfig } from '../config/config.ts';
import { relayChatStream } from '../chat/stream-relay.ts';
import { createChatRequestObserver, validateChatRequest } from '../chat/request-validator.ts';
import type { ChatCompletionChunk, Usage } from '../chat/types.ts';
import { ApiError, internalErrorBody } from '../errors.ts';
import { checkJsonContentType, readJsonBody } from '../http/json-body.ts';
import { sendJson } from '../http/respond.ts';
import type { RequestContext, RouteHandler } from '../http/server.ts';
import type { Logger } from '../log/logger.ts';
import { resolveAlias } from '../routing/alias-routing.ts';
import { createSseWriter } from '../sse/sse-writer.ts';
import { dispatchCompletion, dispatchStream, type AttemptRecord } from '../upstream/dispatcher.ts';
import type { UsageLedger } from '../usage/usage-ledger.ts';
import type { AliasRoutes } from './alias-targets.ts';
import { authenticateRequest, type KeyAuthenticator } from './auth.ts';

export interface ChatCompletionsDeps {
  config: GatewayConfig;
  keys: KeyAuthenticator;
  routes: AliasRoutes;
  usage: UsageLedger;
  logger: Logger;
}

/** Response header naming the output-token maximum when an alias cap lowered it. */
export const MAX_TOKENS_CLAMPED_HEADER = 'x-portcullis-max-tokens-clamped';
/** Response header naming the alias chosen and why: `service-vision; reason=image_url`. */
export const ROUTE_HEADER = 'x-portcullis-route';

export function createChatCompletionsHandler(deps: ChatCompletionsDeps): RouteHandler {
  const { config, keys, routes, usage, logger } = deps;
  const { maxBodyBytes, maxJsonDepth, maxStringBytes, maxMembers } = config.limits;
  const jsonLimits = { maxDepth: maxJsonDepth, maxStringBytes, maxMembers };

  return async (ctx) => {
    const { req, res } = ctx;
    const keyId = authenticateRequest(req, keys).id;
    ctx.log['keyId'] = keyId;
    // Every authenticated request is counted, rejected ones as errors.
    let completionUsage: Usage | undefined;
    res.once('close', () => {
      usage.record(keyId, { usage: completionUsage, error: res.statusCode >= 400 || ctx.log['error'] !== undefined });
    });
    checkJsonContentType(req.headers['content-type']);

    let body: unknown;
    try {
      body = await readJsonBody(req, { maxBytes: maxBodyBytes, limits: jsonLimits, observer: createChatRequestObserver() });
    } catch (err) {
      ctx.bodyAbandoned = true;
      throw err;
    }
    const request = validateChatRequest(body);
    const route = resolveAlias(request, config, routes.isAvailable);
    ctx.log['alias'] = route.alias;
    ctx.log['route'] = route.reason;
    if (route.skipped.length > 0) ctx.log['routeSkipped'] = route.skipped.join(',');
    ctx.log['stream'] = request.stream === true;

    const plan = routes.plan(route.alias, request);
    const headers: Record<string, string> = { [ROUTE_HEADER]: `${route.alias}; reason=${route.reason}` };
    if (plan.clamped) headers[MAX_TOKENS_CLAMPED_HEADER] = String(plan.maxOutputTokens);

    // The upstream call lives only as long as the client is there to read it.
    const abort = new AbortController();
    const onClose = (): void => {
      if (!res.writableFinished) abort.abort(new ClientGoneAbort());
    };
    res.on('close', onClose);
    const attempts: string[] = [];
    const dispatch = {
      requestId: ctx.requestId,
      signal: abort.signal,
      onAttempt: (a: AttemptRecord) => {
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
        const { stream, target } = await dispatchStream(plan.targets, dispatch);
        ctx.log['target'] = target.id;
        const chunks = relayChatStream(stream, {
          alias: route.alias,
          includeUsage: request.stream_options?.include_usage === true,
          onUsage: noteUsage,
        });
        await writeEventStream(ctx, chunks, headers, logger);
      } else {
        const { completion, target } = await dispatchCompletion(plan.targets, dispatch);
        ctx.log['target'] = target.id;
        completion.model = route.alias;
        if (completion.usage !== undefined) noteUsage(completion.usage);
        sendJson(res, 200, completion, headers);
      }
    } catch (err) {
      // The client left: whatever the upstream call ended with (the provider's
      // abort error, the demo's abort reason), there is no one to answer.
      if (abort.signal.aborted) return;
      if (err instanceof ApiError) Object.assign(err.headers, headers);
      throw err;
    } finally {
      ctx.log['upstreamMs'] = Math.round((performance.now() - upstreamStarted) * 1000) / 1000;
      if (attempts.length > 1) ctx.log['attempts'] = attempts.join(',');
      res.off('close', onClose);
      if (abort.signal.aborted) ctx.log['clientGone'] = true;
    }
  };
}

/** The abort reason used when the client disconnects. */
export class ClientGoneAbort extends Error {
  override name = 'ClientGoneAbort';
  constructor() {
    super('the client closed the connection');
  }
}

/**
 * Streams as server-sent events. The dispatcher resolved only once the first
 * chunk arrived, so an error before it is an ordinary JSON error (the
 * boundary renders it); after the first byte it is a `data: {"error":...}`
 * frame and the end, never a clean `[DONE]`.
 */
async function writeEventStream(ctx: RequestContext, source: AsyncIterable<ChatCompletionChunk>, headers: Record<string, string>, logger: Logger): Promise<void> {
  const chunks = source[Symbol.asyncIterator]();
  const first = await chunks.next();
  const sse = createSseWriter(ctx.res);
  sse.start(headers);
  try {
    if (first.done !== true) await sse.data(JSON.stringify(first.value));
    for (;;) {
      const next = await chunks.next();
      if (next.done === true) break;
      await sse.data(JSON.stringify(next.value));
    }
    await sse.data('[DONE]');
    sse.end();
  } catch (err) {
    await chunks.return?.(undefined).catch(() => undefined);
    if (clientGone(ctx.res)) return;
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

function clientGone(res: ServerResponse): boolean {
  return res.destroyed || res.socket === null || res.socket.destroyed;
}
