// POST /v1/embeddings, read top to bottom as the chat pipeline is
// (./pipeline.ts): authenticate, read and validate the body as it arrives
// (../embeddings/), route (an embeddings alias; the key's expiry and allowed
// aliases), admit (the key's limits, with a reservation from the inputs'
// size), send (every input to one target, split in parts of its
// maxInputsPerCall: ../upstream/embeddings-exchange.ts; retries and fallbacks
// as for chat), answer (OpenAI's list, the vectors in the encoding the client
// asked for, written piece by piece). The call object (./call.ts) charges the
// upstream's usage, settles, logs and ends the trace when the response closes,
// as for every other door.
import type { Usage } from '../chat/types.ts';
import { embeddingsObserver, validateEmbeddingsRequest } from '../embeddings/embeddings-request-validator.ts';
import { embeddingsAnswerPieces } from '../embeddings/embeddings-answer-encode.ts';
import { ApiError } from '../errors/api-error.ts';
import { readRequestJson } from '../http/json-body.ts';
import type { RouteHandler } from '../http/request-context.ts';
import { sendJsonPieces } from '../http/respond.ts';
import { costNanos as tokenCostNanos } from '../limits/cost.ts';
import { reserveEmbeddings } from '../limits/reservation.ts';
import { resolveEmbeddingsAlias } from '../routing/alias-routing.ts';
import { describeTargets, openChatTrace, type TracedRoute } from '../telemetry/chat-trace.ts';
import { createContextOnlyTracer } from '../telemetry/tracer.ts';
import { dispatchEach } from '../upstream/dispatcher.ts';
import { EmbeddingsBill, embedOn } from '../upstream/embeddings-exchange.ts';
import { Call } from './call.ts';
import { checkAlias, usableAliases } from './key-policy.ts';
import { admitRouted, authenticateCall, noteRefusals, type PipelineDeps } from './pipeline.ts';
import { callSinks } from './request-guard.ts';
import { CallPhase } from './request-charge.ts';

export const EMBEDDINGS_PATH = '/v1/embeddings';
const ROUTE: TracedRoute = { method: 'POST', path: EMBEDDINGS_PATH, operation: 'embeddings' };

export function createEmbeddingsHandler(deps: PipelineDeps): RouteHandler {
  const { config, keys, targets, metrics } = deps;
  const { maxBodyBytes, maxJsonDepth, maxStringBytes, maxMembers } = config.limits;
  const limits = { maxDepth: maxJsonDepth, maxStringBytes, maxMembers };
  const bounds = config.embeddings;
  const tracer = deps.tracer ?? createContextOnlyTracer();
  const describe = describeTargets(config);

  return async (ctx) => {
    const call = new Call(ctx, deps, openChatTrace(tracer, ctx.req.headers, ctx.requestId, describe, ROUTE));
    ctx.log['traceId'] = call.trace.traceId;
    ctx.onClose(() => call.close());
    // authenticate
    const found = authenticateCall(call, keys, 'bearer', 'embeddings');
    const key = found instanceof Promise ? await found : found;
    // read and validate
    // The observer keeps what it saw of this body: one per request.
    const body = await readRequestJson(ctx, { maxBytes: maxBodyBytes, limits, observer: embeddingsObserver(bounds) });
    if (ctx.aborted) return;
    let request = validateEmbeddingsRequest(body, bounds);
    ctx.log['inputs'] = request.inputs.length;
    // route
    const routeSpan = call.trace.startRoute();
    const route = resolveEmbeddingsAlias(request.model, config, () => usableAliases(key, config));
    call.route = route;
    call.trace.routed(routeSpan, route.alias, route.reason, false);
    checkAlias(key, route.alias, request.model);
    const guarded = deps.guard?.needed(key) === true ? deps.guard.inspect(callSinks(call), body, route.alias, key) : body;
    if (guarded !== body) request = validateEmbeddingsRequest(guarded, bounds);
    const plan = targets.planEmbeddings(route.alias, request, (refusals) => noteRefusals(call, refusals));
    call.plan = plan;
    const reservation = reserveEmbeddings(request.promptBound, plan.prices);
    // admit
    const admitted = admitRouted(call, key, reservation, plan.prices);
    if (!(admitted === true || (await admitted))) return;
    const headers = call.headers;
    // send and answer
    const upstreamStarted = performance.now();
    call.phase = CallPhase.Sent;
    const bill = new EmbeddingsBill();
    try {
      const maxConcurrentCalls = bounds.maxConcurrentCalls;
      const { value, target } = await dispatchEach(plan.targets, call, (t, attempt) => embedOn(t, attempt, request, maxConcurrentCalls, bill));
      call.answeredBy = target.id;
      call.upstreamMs = performance.now() - upstreamStarted;
      call.phase = CallPhase.Answered;
      ctx.log['calls'] = value.calls;
      // The charge is what the upstreams billed, the parts of failed attempts included (request-charge.ts);
      // when a part reported no usage it is the reservation, and the answer says the request's bound.
      noteBill(call, bill);
      call.finishAttempt();
      const promptTokens = value.promptTokens ?? reservation.promptTokens;
      await sendJsonPieces(ctx.res, 200, embeddingsAnswerPieces(value.vectors, request.encoding, route.alias, promptTokens), headers);
    } catch (err) {
      if (err instanceof ApiError) call.errorCode = err.code;
      // Parts the upstreams answered before the request failed were billed: they are charged.
      noteBill(call, bill);
      if (ctx.aborted) return;
      if (err instanceof ApiError) Object.assign(err.headers, headers);
      throw err;
    } finally {
      call.upstreamMs ??= performance.now() - upstreamStarted;
      if (metrics !== undefined && call.answeredBy !== null) metrics.upstreamDone(call.answeredBy, call.upstreamMs / 1000);
    }
  };
}

/** The bill, priced, for the charge; as the access line's reported usage only when every part reported its count. */
function noteBill(call: Call, bill: EmbeddingsBill): void {
  let costNanos = 0;
  for (const attempt of bill.attempts) if (attempt.price !== null) costNanos += tokenCostNanos(attempt.promptTokens, attempt.price.input);
  call.billed = { promptTokens: bill.promptTokens, costNanos, estimated: bill.estimated };
  if (!bill.estimated && bill.attempts.some((a) => a.promptTokens > 0)) call.noteUsage(usageOf(bill.promptTokens));
}

function usageOf(promptTokens: number): Usage {
  return { prompt_tokens: promptTokens, completion_tokens: 0, total_tokens: promptTokens, prompt_tokens_details: { cached_tokens: 0 } };
}

