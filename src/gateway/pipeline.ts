// One request on an endpoint (./endpoint.ts) as one pipeline, read top to
// bottom: authenticate, read and validate the body as it arrives, route
// (resolve the alias; the key's expiry and allowed aliases), admit (the key's
// limits), send (dispatch to the alias's upstream targets), answer (JSON, or
// events through the stream pump). Everything the request learns goes on its
// call object (./call.ts), which charges, settles, logs and ends the trace
// when the response closes. The request's lifetime (abort, client gone,
// shutdown, timing, access line) is the HTTP shell's RequestContext.
import { rawAnswer, setRawAnswer } from '../chat/messages-origin.ts';
import type { ChatCompletion } from '../chat/types.ts';
import type { GatewayConfig, Price } from '../config/config.ts';
import { ApiError } from '../errors/api-error.ts';
import { PlaceholderBook, type AnswerGuard } from '../guard/answer-guard.ts';
import { readRequestJson } from '../http/json-body.ts';
import type { LogFields } from '../log/logger.ts';
import { sendJson } from '../http/respond.ts';
import type { RouteHandler } from '../http/request-context.ts';
import { hasAnyLimit } from '../limits/key-limits.ts';
import { reserveRequest, type Reservation } from '../limits/reservation.ts';
import { resolveAlias, type ResolvedAlias } from '../routing/alias-routing.ts';
import type { AliasTargets } from '../routing/alias-targets.ts';
import type { TargetRefusal } from '../routing/target-refusals.ts';
import { describeTargets, openChatTrace } from '../telemetry/chat-trace.ts';
import { createContextOnlyTracer, type Tracer } from '../telemetry/tracer.ts';
import { AttemptOutcome, describeAttempt, dispatchCompletion, dispatchStream, type UpstreamTarget } from '../upstream/dispatcher.ts';
import { guardCompletion } from './answer-chunk-guard.ts';
import { guardRawAnswer } from './answer-raw-guard.ts';
import { authenticateRequest, type KeyAuthenticator } from './auth.ts';
import { Call, type CallDeps } from './call.ts';
import type { Endpoint } from './endpoint.ts';
import { admitRequest, checkAlias, checkExpiry, KeyLimitRefusal, usableAliases, type KeyPolicy } from './key-policy.ts';
import { CallPhase } from './request-charge.ts';
import { callSinks, type RequestGuard } from './request-guard.ts';

export interface PipelineDeps extends CallDeps {
  config: GatewayConfig;
  keys: KeyAuthenticator;
  targets: AliasTargets;
  /** telemetry: the process's tracer; default: trace context only, nothing recorded. */
  tracer?: Tracer | undefined;
  /** The egress guard of this configuration; absent: none (tests of other parts). */
  guard?: RequestGuard | undefined;
}

/** Response header naming the output-token maximum when an alias cap lowered it. */
const MAX_TOKENS_CLAMPED_HEADER = 'x-portcullis-max-tokens-clamped';
/** Response header naming the alias chosen and why: `service-vision; reason=image_url`. */
const ROUTE_HEADER = 'x-portcullis-route';

export function createEndpointHandler(endpoint: Endpoint, deps: PipelineDeps): RouteHandler {
  const { config, keys, targets, metrics } = deps;
  const { maxBodyBytes, maxJsonDepth, maxStringBytes, maxMembers } = config.limits;
  const limits = { maxDepth: maxJsonDepth, maxStringBytes, maxMembers };
  const tracer = deps.tracer ?? createContextOnlyTracer();
  const describe = describeTargets(config);
  const keyHeaders = endpoint.keyHeaders;

  return async (ctx) => {
    // telemetry: the server span, from the client's traceparent or a new trace; it ends when the response closes
    const call = new Call(ctx, deps, openChatTrace(tracer, ctx.req.headers, ctx.requestId, describe, endpoint.route));
    ctx.log['traceId'] = call.trace.traceId;
    ctx.onClose(() => call.close());
    // authenticate
    const found = authenticateCall(call, keys, keyHeaders, endpoint.door);
    const key = found instanceof Promise ? await found : found;
    ctx.onShutdown = () => call.shutdown();
    // read and validate
    const body = await readRequestJson(ctx, { maxBytes: maxBodyBytes, limits, observer: endpoint.observer() });
    // Ended (the client left, a shutdown) just as the body completed.
    if (ctx.aborted) return;
    const prepared = endpoint.prepare === undefined ? body : await endpoint.prepare(body, key.id);
    if (ctx.aborted) return;
    let request = endpoint.validate(prepared, ctx.req.headers);
    call.request = request;
    const stream = request.stream === true;
    // route
    const routeSpan = call.trace.startRoute();
    const route = resolveAlias(request, config, targets.isAvailable, () => usableAliases(key, config));
    call.route = route;
    call.trace.routed(routeSpan, route.alias, route.reason, stream);
    checkAlias(key, route.alias, request.model);
    // the egress guard: what leaves is checked after routing, under the alias's and the key's policy;
    // the answer's guard continues the request's placeholders
    let guarded = prepared;
    const guard = deps.guard;
    if (guard !== undefined && guard.needed(key)) {
      const book = new PlaceholderBook();
      const sinks = callSinks(call);
      guarded = guard.inspect(sinks, prepared, route.alias, key, book);
      call.answerGuard = guard.answers(sinks, route.alias, key, book);
      call.guardWatches = guard.watches(route.alias, key);
    }
    if (guarded !== prepared) {
      endpoint.guarded?.(prepared, guarded);
      request = endpoint.validate(guarded, ctx.req.headers);
      call.request = request;
    }
    const plan = targets.plan(route.alias, request, (refusals) => noteRefusals(call, refusals));
    call.plan = plan;
    // admit: a key without limits skips the limiter and its await
    const admitted = admitRouted(call, key, reserveRequest(request, plan.maxOutputTokens, { imageTokens: plan.imageTokens }, plan.prices), plan.prices);
    if (!(admitted === true || (await admitted))) return;
    const headers = call.headers;
    if (plan.clamped) headers[MAX_TOKENS_CLAMPED_HEADER] = String(plan.maxOutputTokens);
    // send and answer; the call charges and settles when the response closes
    const upstreamStarted = performance.now();
    call.phase = CallPhase.Sent;
    try {
      if (stream) {
        const { stream: upstream, target } = await dispatchStream(plan.targets, call);
        call.answeredBy = target.id;
        noteProvider(ctx.log, headers, target);
        metrics?.streamStarted();
        try {
          if (await endpoint.stream(upstream, call, request, route.alias)) call.phase = CallPhase.Answered;
        } finally {
          metrics?.streamEnded();
          call.finishAttempt();
        }
      } else {
        const { completion, target } = await dispatchCompletion(plan.targets, call);
        call.answeredBy = target.id;
        noteProvider(ctx.log, headers, target);
        call.phase = CallPhase.Answered;
        if (completion.usage !== undefined) call.noteUsage(completion.usage);
        call.trace.responseModel(completion.model);
        const answer = endpoint.answer(call.answerGuard === null ? completion : guardAnswer(call.answerGuard, completion), route.alias, request);
        if (endpoint.answered !== undefined) await endpoint.answered(answer, request, key.id);
        call.finishAttempt();
        sendJson(ctx.res, 200, answer, headers);
      }
    } catch (err) {
      if (err instanceof ApiError) call.errorCode = err.code;
      // The client left, or a shutdown answered already: whatever the upstream
      // call ended with (the provider's abort error, the demo's abort reason),
      // there is no one to answer.
      if (ctx.aborted) return;
      if (err instanceof ApiError) Object.assign(err.headers, headers);
      throw err;
    } finally {
      const upstreamMs = performance.now() - upstreamStarted;
      call.upstreamMs = upstreamMs;
      if (metrics !== undefined && call.answeredBy !== null) metrics.upstreamDone(call.answeredBy, upstreamMs / 1000);
    }
  };
}

/**
 * A whole answer through the egress guard: a door's passed-through answer
 * (an Anthropic or Responses upstream's own, which the door sends) in its own
 * shape, any other in the chat shape. Throws guard_failed (500) when the
 * guard faults: nothing of the answer is sent.
 */
function guardAnswer(guard: AnswerGuard, completion: ChatCompletion): ChatCompletion {
  const raw = rawAnswer(completion);
  if (raw === undefined) return guardCompletion(guard, completion);
  const guarded = guardRawAnswer(raw, guard);
  if (guarded !== raw) setRawAnswer(completion, guarded);
  return completion;
}

/**
 * The call's key, for every door: found (synchronously when the store has it
 * at hand), logged, its expiry checked, the call counted as started. Throws
 * the client's 401 or 403.
 */
export function authenticateCall(call: Call, keys: KeyAuthenticator, keyHeaders: Endpoint['keyHeaders'], door: Endpoint['door']): KeyPolicy | Promise<KeyPolicy> {
  const { ctx } = call;
  const found = authenticateRequest(ctx.req, keys, ctx.clientAddress, keyHeaders, door);
  return found instanceof Promise ? found.then((key) => keyFound(call, key)) : keyFound(call, found);
}

function keyFound(call: Call, key: KeyPolicy): KeyPolicy {
  // Logged before the expiry check: an operator sees which expired key is still in use.
  call.ctx.log['keyId'] = key.id;
  checkExpiry(key, call.deps.scheduler.now());
  call.key = key;
  call.phase = CallPhase.Authenticated;
  call.deps.metrics?.requestStarted();
  return key;
}

/**
 * The routed request's reservation and the key's limits, for every door: the
 * priced check, then admission (a key without limits skips the limiter, and
 * this returns true at once, with no promise); the route header on the answer.
 * False when the client left (or a shutdown answered) while the limiter decided.
 */
export function admitRouted(call: Call, key: KeyPolicy, reservation: Reservation, prices: readonly (Price | null)[]): boolean | Promise<boolean> {
  const route = call.route as ResolvedAlias;
  call.reservation = reservation;
  checkPriced(key, route.alias, prices);
  call.phase = CallPhase.Routed;
  if (!hasAnyLimit(key.limits)) {
    call.trace.startAdmission().end();
    return admitted(call, route);
  }
  return admit(call, key).then((ok) => ok && admitted(call, route));
}

function admitted(call: Call, route: ResolvedAlias): true {
  call.phase = CallPhase.Admitted;
  call.headers[ROUTE_HEADER] = `${route.alias}; reason=${route.reason}`;
  return true;
}

/** Notes that the client reads too, as answer headers. */
const NOTE_HEADERS: Readonly<Record<string, string>> = { toolsLeftOut: 'x-portcullis-tools-left-out' };

/**
 * What the answering target's provider says about the request, on the access
 * line (an Anthropic upstream: the anthropic-beta values it did not pass; a
 * provider that translated a Responses request: the tools it left out of the
 * offer, also an answer header).
 */
function noteProvider(log: LogFields, headers: Record<string, string>, target: UpstreamTarget): void {
  const notes = target.provider.requestNotes?.(target.request);
  if (notes === undefined) return;
  for (const [field, value] of Object.entries(notes)) {
    log[field] = boundedNote(value, MAX_LOGGED_NOTE);
    const header = NOTE_HEADERS[field];
    if (header !== undefined) headers[header] = headerValue(value);
  }
}

/** A note's characters on the access line, at most. */
const MAX_LOGGED_NOTE = 4096;
/** A note's bytes in an answer header, at most: far below any client's header limit (16 KiB in node and undici). */
const MAX_HEADER_NOTE = 512;

function boundedNote(value: string, max: number): string {
  return value.length <= max ? value : `${value.slice(0, max)}...`;
}

/**
 * A comma-separated note as a header value: names are the client's own strings
 * (a namespace's function, say), so anything outside visible ASCII becomes
 * `?`, each name once, and the list stops before MAX_HEADER_NOTE with how many
 * more there were.
 */
function headerValue(value: string): string {
  const names = [...new Set(value.split(','))].map((name) => name.replace(/[^\x21-\x7e]/g, '?'));
  let out = '';
  for (let i = 0; i < names.length; i++) {
    const next = out === '' ? (names[i] as string) : `${out},${names[i] as string}`;
    if (next.length > MAX_HEADER_NOTE) return out === '' ? `+${names.length} more` : `${out},+${names.length - i} more`;
    out = next;
  }
  return out;
}

/** The client's 400 names targets by position and provider type; the operator's line names each one. */
export function noteRefusals(call: Call, refusals: readonly TargetRefusal[]): void {
  call.refusedBy = refusals
    .map((r) => describeAttempt({ targetId: r.targetId, attempt: 0, outcome: AttemptOutcome.SkippedUnsupported, ...(r.refusal.param === null ? {} : { param: r.refusal.param }) }))
    .join(',');
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
 * The key's limits: the x-ratelimit-* headers go on the call's answer headers.
 * False when the client left (or a shutdown answered) while the limiter
 * decided.
 */
async function admit(call: Call, key: KeyPolicy): Promise<boolean> {
  const { ctx, deps, trace } = call;
  const span = trace.startAdmission();
  try {
    const admission = await admitRequest(deps.limiter, key, call.reservation!, deps.scheduler.now());
    Object.assign(call.headers, admission.headers);
    if (admission.permit === null) return true;
    // The client left while the limiter decided: give the permit back now, unused, and stop.
    if (ctx.aborted) {
      call.release(admission.permit);
      return false;
    }
    call.hold(admission.permit);
    return true;
  } catch (err) {
    if (err instanceof KeyLimitRefusal) {
      deps.metrics?.rateLimited(call.route?.alias ?? '', err.refusal);
      call.limit = err.refusal;
    }
    throw err;
  } finally {
    span.setAttribute('portcullis.limit', call.limit);
    span.end();
  }
}
