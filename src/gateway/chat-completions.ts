// POST /v1/chat/completions: authenticate, read and validate the body as it
// arrives, resolve the alias, call the upstream, answer in the spec's shapes.
import type { ServerResponse } from 'node:http';
import type { GatewayConfig, MaxTokensParam } from '../config/config.ts';
import { relayChatStream } from '../chat/stream-relay.ts';
import { createChatRequestObserver, validateChatRequest } from '../chat/request-validator.ts';
import type { ChatCompletionChunk } from '../chat/types.ts';
import { buildUpstreamRequest } from '../chat/upstream-request.ts';
import { ApiError, internalErrorBody } from '../errors.ts';
import { checkJsonContentType, readJsonBody } from '../http/json-body.ts';
import { sendJson } from '../http/respond.ts';
import type { RequestContext, RouteHandler } from '../http/server.ts';
import type { Logger } from '../log/logger.ts';
import type { ChatProvider, UpstreamCall } from '../providers/provider.ts';
import { resolveAlias } from '../routing/alias-routing.ts';
import { createSseWriter } from '../sse/sse-writer.ts';
import { authenticateRequest, type KeyAuthenticator } from './auth.ts';

export interface UpstreamBinding {
  provider: ChatProvider;
  maxTokensParam: MaxTokensParam;
}

export interface ChatCompletionsDeps {
  config: GatewayConfig;
  keys: KeyAuthenticator;
  /** One binding per configured provider name. */
  upstreams: ReadonlyMap<string, UpstreamBinding>;
  logger: Logger;
}

/** Response header naming the output-token maximum when an alias cap lowered it. */
export const MAX_TOKENS_CLAMPED_HEADER = 'x-portcullis-max-tokens-clamped';

export function createChatCompletionsHandler(deps: ChatCompletionsDeps): RouteHandler {
  const { config, keys, upstreams, logger } = deps;
  const { maxBodyBytes, maxJsonDepth, maxStringBytes, maxMembers } = config.limits;
  const jsonLimits = { maxDepth: maxJsonDepth, maxStringBytes, maxMembers };

  return async (ctx) => {
    const { req, res } = ctx;
    ctx.log['keyId'] = authenticateRequest(req, keys).id;
    checkJsonContentType(req.headers['content-type']);

    let body: unknown;
    try {
      body = await readJsonBody(req, { maxBytes: maxBodyBytes, limits: jsonLimits, observer: createChatRequestObserver() });
    } catch (err) {
      ctx.bodyAbandoned = true;
      throw err;
    }
    const request = validateChatRequest(body);
    const route = resolveAlias(request, config);
    ctx.log['alias'] = route.alias;
    ctx.log['route'] = route.reason;
    ctx.log['stream'] = request.stream === true;

    const upstream = upstreams.get(route.target.provider);
    if (upstream === undefined) throw new Error(`no upstream bound for provider ${route.target.provider}`);
    const plan = buildUpstreamRequest(request, route.target, upstream.maxTokensParam);
    const headers: Record<string, string> = plan.clamped ? { [MAX_TOKENS_CLAMPED_HEADER]: String(plan.maxOutputTokens) } : {};

    // The upstream call lives only as long as the client is there to read it.
    const abort = new AbortController();
    const onClose = (): void => {
      if (!res.writableFinished) abort.abort(new ClientGoneAbort());
    };
    res.on('close', onClose);
    const call: UpstreamCall = { request: plan.request, requestId: ctx.requestId, signal: abort.signal };
    const upstreamStarted = performance.now();
    try {
      if (request.stream === true) {
        const includeUsage = request.stream_options?.include_usage === true;
        await streamCompletion(ctx, upstream.provider.stream(call), route.alias, includeUsage, headers, logger);
      } else {
        const completion = await upstream.provider.complete(call);
        completion.model = route.alias;
        if (completion.usage !== undefined) ctx.log['completionTokens'] = completion.usage.completion_tokens;
        sendJson(res, 200, completion, headers);
      }
    } catch (err) {
      // The client left: whatever the upstream call ended with (the provider's
      // abort error, the demo's abort reason), there is no one to answer.
      if (abort.signal.aborted) return;
      throw err;
    } finally {
      ctx.log['upstreamMs'] = Math.round((performance.now() - upstreamStarted) * 1000) / 1000;
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
 * Streams as server-sent events. An error before the first chunk is an
 * ordinary JSON error (the boundary renders it); after the first byte it is a
 * `data: {"error":...}` frame and the end, never a clean `[DONE]`.
 */
async function streamCompletion(
  ctx: RequestContext,
  source: AsyncIterable<ChatCompletionChunk>,
  alias: string,
  includeUsage: boolean,
  headers: Record<string, string>,
  logger: Logger,
): Promise<void> {
  const chunks = relayChatStream(source, {
    alias,
    includeUsage,
    onUsage: (usage) => {
      ctx.log['completionTokens'] = usage.completion_tokens;
    },
  })[Symbol.asyncIterator]();

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
