// One request on an endpoint, from the socket to its close: the call object.
// It holds everything the request learns, in typed fields, and how far it got
// (`phase`); the pipeline (./pipeline.ts) fills it top to bottom, the upstream
// dispatcher reports to it (it is the dispatch context), the stream pump asks
// it where the events go (it is the pump's control), and when the response
// closes it makes the one charge (./request-charge.ts) that both the key's
// usage record and the limiter's settlement take, then writes its fields to
// the access line and ends the trace. Its methods live on the prototype: a
// request makes this one object, not a closure per hook.
//
// The limiter counts a charge at most limits.maxChargeMultiple times the
// reservation (src/limits/charge-ceiling.ts), which is warned of and counted.
import { requestFieldsUsed } from '../chat/request-fields.ts';
import type { ChunkRelay } from '../chat/stream-relay.ts';
import type { ChatRequest, Usage, ValidatedChatRequest } from '../chat/types.ts';
import type { Price } from '../config/config.ts';
import { renderError } from '../errors/render.ts';
import { ClientGoneAbort, SHUTDOWN_STREAM_MESSAGE, ShuttingDownError, type RequestContext } from '../http/request-context.ts';
import { countedCharge } from '../limits/charge-ceiling.ts';
import { amountOf } from '../limits/cost.ts';
import type { Limiter, Permit } from '../limits/limiter.ts';
import type { Reservation } from '../limits/reservation.ts';
import type { Logger } from '../log/logger.ts';
import type { GatewayMetrics } from '../metrics/gateway-metrics.ts';
import type { ResolvedAlias } from '../routing/alias-routing.ts';
import { createSseWriter, frame, type SseWriter } from '../sse/sse-writer.ts';
import type { ChatTrace, ChatTraceResult } from '../telemetry/chat-trace.ts';
import type { AbortSource } from '../time/abort-source.ts';
import type { Scheduler } from '../time/scheduler.ts';
import { AttemptOutcome, describeAttempt, wasAttempted, type AttemptRecord } from '../upstream/dispatcher.ts';
import type { UpstreamFailureLog } from '../upstream/failure-log.ts';
import type { UsageLedger } from '../usage/usage-ledger.ts';
import type { KeyPolicy } from './key-policy.ts';
import type { PermitKeeper } from './permit-keeper.ts';
import type { AnswerGuard } from '../guard/answer-guard.ts';
import { callSinks, noteAnswerFindings, type GuardTally } from './request-guard.ts';
import { CallPhase, chargeFor, type BilledCalls, type RequestCharge } from './request-charge.ts';

/** What every call of one handler shares: fixed for the configuration's life. */
export interface CallDeps {
  usage: UsageLedger;
  limiter: Limiter;
  permits: PermitKeeper;
  logger: Logger;
  metrics?: GatewayMetrics | undefined;
  /** The rate-limited "upstream failed" warn lines; none in some tests. */
  upstreamFailures?: UpstreamFailureLog | undefined;
  scheduler: Scheduler;
  /** limits.maxChargeMultiple: the limiter counts a charge at most this many times its reservation. */
  maxChargeMultiple: number;
}

/** The access line's `attempts` lists at most this many attempts. */
const MAX_LOGGED_ATTEMPTS = 16;

/** The error event that ends a chat stream cut by a shutdown. */
const SHUTDOWN_FRAME = frame('data: ', renderError(new ShuttingDownError(SHUTDOWN_STREAM_MESSAGE)).body);

const NO_PRICES: readonly (Price | null)[] = [];

const CEILING_WARNING = 'an upstream reported more than limits.maxChargeMultiple times the reservation; the key limits count the ceiling, its usage what was reported';
/** An embeddings request's parts: its retried attempts were billed too, so an honest upstream can pass the ceiling. */
const BILLED_CEILING_WARNING =
  "the calls the upstreams billed for an embeddings request (its retried attempts' parts included) came to more than limits.maxChargeMultiple times its reservation; the key limits count the ceiling, its usage what was billed";
const OVER_RESERVATION_WARNING = 'a request used more tokens than its reservation; raise the alias imageTokens if it carried images';
const BILLED_OVER_RESERVATION_WARNING =
  "the calls the upstreams billed for an embeddings request came to more tokens than its reservation: its retried attempts' parts, or an upstream that counts more tokens than an input's bytes";

/** What the call reads of a request's plan: each target's price, and every price. */
export interface PricedPlan {
  readonly targets: readonly { readonly id: string; readonly price?: Price | null | undefined }[];
  readonly prices: readonly (Price | null)[];
}

export class Call {
  readonly ctx: RequestContext;
  readonly deps: CallDeps;
  readonly trace: ChatTrace;
  phase: CallPhase = CallPhase.Received;
  key: KeyPolicy | null = null;
  request: ChatRequest | null = null;
  route: ResolvedAlias | null = null;
  /** The targets the request may go to and their prices (a chat plan, or an embeddings plan). */
  plan: PricedPlan | null = null;
  /** Set once routed; null for a request refused before (nothing to charge). */
  reservation: Reservation | null = null;
  /** The limiter's permit, held (and renewed) until the call closes. */
  permit: Permit | null = null;
  /** Price of the last target tried: the one that answered, or gave an unusable answer. */
  answeredPrice: Price | null = null;
  /** The last target tried (`provider/model`): the one that answered, or the last that failed. */
  target: string | null = null;
  /** The target that answered: the upstream-duration metric is by that target only. */
  answeredBy: string | null = null;
  /** Each attempt (and target skipped), for the access line's `attempts` when there was more than one. */
  attempts: string[] = [];
  /** Every target refused the request before any call: the access line's `attempts` names them. */
  refusedBy: string | null = null;
  /** The upstream's final usage (a whole JSON answer, or a stream's end). */
  usage: Usage | undefined = undefined;
  /** The stream relay, for what a cut stream generated and reported so far. */
  relay: Pick<ChunkRelay, 'usage' | 'generatedBytes'> | undefined = undefined;
  /** The SSE writer, once the first event opened the stream. */
  writer: SseWriter | undefined = undefined;
  /** The shutdown wrote the error frame and ended the stream: the pump only stops. */
  shutdownFrameSent = false;
  /** The events a shutdown ends a started stream with, in the door's shape (a named-event door's pump sets them); null: OpenAI's error frame. */
  shutdownEvents: (() => string) | null = null;
  /** The error code a failed upstream call ended with (or a stream's error frame carried). */
  errorCode: string | undefined = undefined;
  /** Which key limit refused the request. */
  limit: string | undefined = undefined;
  /** The answer's headers (rate limits, route, clamp), set once admitted. */
  headers: Record<string, string> = {};
  /** What the upstreams billed for the calls they answered (an embeddings request's parts); null for chat. */
  billed: BilledCalls | null = null;
  /** The egress guard's findings on this request, by action; null until the guard looked at it. */
  guardTally: GuardTally | null = null;
  /** The egress guard of the answer; null: nothing to do for it (no scanning, nothing to restore). */
  answerGuard: AnswerGuard | null = null;
  /** The egress guard watches this request (a policy is active for it, or its answer is scanned): what an error says of the answer names none of its values. */
  guardWatches = false;
  /** Time spent on the upstream, in ms, once the dispatch ended. */
  upstreamMs: number | undefined = undefined;

  constructor(ctx: RequestContext, deps: CallDeps, trace: ChatTrace) {
    this.ctx = ctx;
    this.deps = deps;
    this.trace = trace;
  }

  // --- the dispatch context (../upstream/dispatcher.ts) ---

  get requestId(): string {
    return this.ctx.requestId;
  }

  get signal(): AbortSource {
    return this.ctx;
  }

  get scheduler(): Scheduler {
    return this.deps.scheduler;
  }

  /** The compiled strict json_schema the validator put on the request; the answer is held to it. Under the egress
   * guard a mismatch's message names the path and the types, never the answer's value (which the guard had not judged). */
  get answerSchema(): ValidatedChatRequest['answerSchema'] {
    const schema = (this.request as ValidatedChatRequest | null)?.answerSchema;
    return schema !== undefined && this.guardWatches ? schema.withoutValues : schema;
  }

  startAttempt(targetId: string, attempt: number): Record<string, string> {
    return this.trace.startAttempt(targetId, attempt);
  }

  onAttempt(a: AttemptRecord): void {
    this.trace.attemptDone(a);
    this.deps.metrics?.attempt(a.targetId, a.outcome);
    // The access line names the last target tried, so a request every
    // target failed still says where it went (`attempts` has the rest).
    if (wasAttempted(a.outcome)) {
      this.target = a.targetId;
      // Charged at the price of the last target tried: the one that answered, or gave an unusable answer.
      this.answeredPrice = this.priceOf(a.targetId);
    }
    if (a.cause !== undefined && (a.outcome === AttemptOutcome.Retry || a.outcome === AttemptOutcome.Fallback)) {
      this.deps.upstreamFailures?.note({ requestId: this.ctx.requestId, targetId: a.targetId, attempt: a.attempt, outcome: a.outcome, code: a.code, cause: a.cause });
    }
    if (this.attempts.length < MAX_LOGGED_ATTEMPTS) this.attempts.push(describeAttempt(a));
  }

  private priceOf(targetId: string): Price | null {
    const targets = this.plan?.targets ?? [];
    for (let i = 0; i < targets.length; i++) {
      const t = targets[i];
      if (t !== undefined && t.id === targetId) return t.price ?? null;
    }
    return null;
  }

  // --- the stream pump's control (./event-stream-pump.ts) ---

  onRelay(relay: Pick<ChunkRelay, 'usage' | 'generatedBytes'>): void {
    this.relay = relay;
  }

  /** Opens the SSE writer on the response at the first event: the status line and the answer's headers go with it. */
  open(): SseWriter {
    this.phase = CallPhase.Answering;
    const sse = createSseWriter(this.ctx.res);
    sse.start(this.headers);
    this.writer = sse;
    return sse;
  }

  endedForShutdown(): boolean {
    return this.shutdownFrameSent;
  }

  /** The socket may be gone before the response's 'close' (and the abort) follow. */
  clientGone(): boolean {
    const res = this.ctx.res;
    return this.ctx.reason instanceof ClientGoneAbort || res.destroyed || res.socket === null || res.socket.destroyed;
  }

  onStreamError(code: string, unexpected: unknown): void {
    if (unexpected !== undefined) {
      this.deps.logger.error('unexpected error mid-stream', { requestId: this.ctx.requestId, error: unexpected instanceof Error ? unexpected.name : typeof unexpected });
    }
    this.ctx.error = code;
  }

  /** The upstream's final usage arrived: kept for the charge. */
  noteUsage(usage: Usage): void {
    this.usage = usage;
  }

  // --- the request's lifetime (the HTTP shell calls these through the context) ---

  /**
   * The drain deadline passed with this request open: a started stream ends
   * with the shutdown error frame now (the shell aborts the upstream work
   * next). A request with nothing sent yet is answered 503 by the HTTP shell.
   */
  shutdown(): void {
    const sse = this.writer;
    if (sse === undefined || this.shutdownFrameSent) return;
    this.shutdownFrameSent = true;
    // A failed write means the client is gone: nothing more to tell it.
    sse.frames(this.shutdownEvents?.() ?? SHUTDOWN_FRAME).catch(() => undefined);
    sse.end();
  }

  onShutdownEvents(make: () => string): void {
    this.shutdownEvents = make;
  }

  /** Holds `permit` until the request closes, renewing its lease meanwhile. */
  hold(permit: Permit): void {
    this.permit = permit;
    this.deps.permits.hold(permit);
  }

  /** Gives an unused permit back at once (the client left while the limiter decided). */
  release(permit: Permit): void {
    this.settle(permit, { promptTokens: 0, completionTokens: 0, costNanos: 0 });
  }

  /**
   * The response closed, however it ended: the charge (for an authenticated
   * call), the settlement of its permit, its access-log fields, the trace's end.
   */
  close(): void {
    const key = this.key;
    const reported = this.usage ?? this.relay?.usage;
    let charge: RequestCharge | null = null;
    // The answer's findings, however far it got, are recorded once, before the key's usage and the line.
    if (this.answerGuard !== null) noteAnswerFindings(callSinks(this), this.answerGuard.drain());
    try {
      if (key !== null) {
        this.deps.metrics?.requestEnded();
        charge = this.account(key, reported);
      }
    } finally {
      // A charge that failed (the shell logs the throw) still leaves the line and the trace whole.
      this.phase = CallPhase.Closed;
      this.writeAccessFields(reported, charge);
      if (this.trace.recording) this.trace.finish(this.traceResult());
    }
  }

  /** Ends the answering attempt's span (after the body, or the stream's end). */
  finishAttempt(): void {
    if (this.trace.recording) this.trace.finishAttempt(this.traceResult());
  }

  /** How the request stands for its spans (codes and counts only). */
  private traceResult(): ChatTraceResult {
    const res = this.ctx.res;
    return {
      status: res.headersSent ? res.statusCode : null,
      error: this.ctx.error ?? undefined,
      promptTokens: this.usage?.prompt_tokens,
      completionTokens: this.usage?.completion_tokens,
    };
  }

  private failed(): boolean {
    return this.ctx.res.statusCode >= 400 || this.ctx.error !== null;
  }

  private account(key: KeyPolicy, reported: Usage | undefined): RequestCharge | null {
    const reservation = this.reservation;
    if (reservation === null) {
      this.deps.usage.record(key.id, { charged: null, error: this.failed(), guard: this.guardTally });
      return null;
    }
    // The permit is settled whatever happens below: a throw (a charge the usage ledger
    // refuses, a bug) must not leave it held, and renewed by the permit keeper, forever.
    // Until the charge is known the reservation stands, as for a permit never settled.
    let settleWith: Pick<RequestCharge, 'promptTokens' | 'completionTokens' | 'costNanos'> = {
      promptTokens: reservation.promptTokens,
      completionTokens: reservation.outputTokens,
      costNanos: reservation.costNanos,
    };
    try {
      const charge = this.decideCharge(key, reservation, reported);
      settleWith = charge;
      const charged = charge.basis === 'none' ? null : { promptTokens: charge.promptTokens, completionTokens: charge.completionTokens, cachedTokens: charge.cachedTokens, costNanos: charge.costNanos };
      this.deps.usage.record(key.id, { charged, error: this.failed(), guard: this.guardTally });
      return charge;
    } finally {
      if (this.permit !== null) this.settle(this.permit, settleWith);
    }
  }

  private settle(held: Permit, charge: Pick<RequestCharge, 'promptTokens' | 'completionTokens' | 'costNanos'>): void {
    const { permits, limiter, logger, scheduler, maxChargeMultiple } = this.deps;
    permits.release(held);
    const key = this.key as KeyPolicy;
    const input = { permit: held, limits: key.limits, charge: { tokens: charge.promptTokens + charge.completionTokens, costNanos: charge.costNanos }, nowMs: scheduler.now(), maxChargeMultiple };
    const requestId = this.ctx.requestId;
    // The permit is given back whatever happens: a failed settlement leaves it to its lease.
    Promise.resolve()
      .then(() => limiter.settle(input))
      .catch((err: unknown) => {
        logger.warn('rate-limit settlement failed; the permit lease will release it', { requestId, error: err instanceof Error ? err.name : typeof err });
      });
  }

  /** The request's one charge, for the key's usage record and the limiter alike. */
  private decideCharge(key: KeyPolicy, reservation: Reservation, reported: Usage | undefined): RequestCharge {
    const { logger, metrics, maxChargeMultiple } = this.deps;
    const charge = chargeFor({
      reservation,
      phase: this.phase,
      clientLeft: this.ctx.aborted,
      errorCode: this.errorCode ?? this.ctx.error ?? undefined,
      usage: reported,
      generatedBytes: this.relay?.generatedBytes ?? 0,
      answeredPrice: this.answeredPrice,
      prices: this.plan?.prices ?? NO_PRICES,
      billed: this.billed,
    });
    const requestId = this.ctx.requestId;
    if (charge.note !== undefined && charge.note !== 'usage_missing') {
      logger.warn('the upstream reported usage the gateway cannot charge; the reservation was charged instead', { requestId, keyId: key.id, target: this.target, problem: charge.note });
    }
    const chargedTokens = charge.promptTokens + charge.completionTokens;
    const counted = countedCharge(reservation, { tokens: chargedTokens, costNanos: charge.costNanos }, maxChargeMultiple);
    const alias = this.route?.alias ?? null;
    if (counted.tokens !== chargedTokens || counted.costNanos !== charge.costNanos) {
      // One answer must not spend a budget faster than the admissions allowed: the limiter counts the ceiling (it applies the same rule).
      metrics?.chargeClamped(alias);
      logger.warn(this.billed === null ? CEILING_WARNING : BILLED_CEILING_WARNING, {
        requestId,
        keyId: key.id,
        alias,
        target: this.target,
        reserved: reservation.tokens,
        reported: chargedTokens,
        counted: counted.tokens,
        reservedCostNanos: reservation.costNanos,
        reportedCostNanos: charge.costNanos,
        countedCostNanos: counted.costNanos,
        maxChargeMultiple,
      });
    } else if (reported !== undefined && charge.basis === 'usage' && chargedTokens > reservation.tokens) {
      // The bound failed (an image above imageTokens, a provider's hidden prompt): the limits hold one request less tightly.
      logger.warn(this.billed === null ? OVER_RESERVATION_WARNING : BILLED_OVER_RESERVATION_WARNING, {
        requestId,
        alias,
        reserved: reservation.tokens,
        charged: chargedTokens,
      });
    }
    return charge;
  }

  /** The call's part of the access line, written once as the response closes. */
  private writeAccessFields(reported: Usage | undefined, charge: RequestCharge | null): void {
    const log = this.ctx.log;
    const route = this.route;
    if (route !== null) {
      log['alias'] = route.alias;
      log['route'] = route.reason;
      if (route.skipped.length > 0) log['routeSkipped'] = route.skipped.join(',');
      log['stream'] = this.request?.stream === true;
    }
    if (this.request !== null) {
      // OpenAI's fields beyond the contract's table that the request used (the operator's requestFields).
      const fields = requestFieldsUsed(this.request);
      if (fields.length > 0) log['requestFields'] = fields.join(',');
    }
    if (this.limit !== undefined) log['limit'] = this.limit;
    if (this.target !== null) log['target'] = this.target;
    if (this.refusedBy !== null) log['attempts'] = this.refusedBy;
    else if (this.attempts.length > 1) log['attempts'] = this.attempts.join(',');
    if (this.upstreamMs !== undefined) log['upstreamMs'] = Math.round(this.upstreamMs * 1000) / 1000;
    if (reported !== undefined && (charge === null || charge.note === undefined || !charge.note.startsWith('usage_bad'))) {
      log['promptTokens'] = reported.prompt_tokens;
      log['completionTokens'] = reported.completion_tokens;
      log['cachedTokens'] = reported.prompt_tokens_details.cached_tokens;
    } else if (reported !== undefined) {
      // Not believed, so not counted as reported either (the tokens metric reads these fields); a warning names the problem.
      log['promptTokens'] = null;
      log['completionTokens'] = null;
      log['cachedTokens'] = null;
    }
    if (charge !== null) {
      log['charge'] = charge.basis;
      log['chargedTokens'] = charge.promptTokens + charge.completionTokens;
      log['costNanos'] = charge.costNanos;
      log['cost'] = amountOf(charge.costNanos);
    }
  }
}
