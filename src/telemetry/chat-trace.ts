// The spans of one chat completion request, in the words of OpenTelemetry's
// semantic conventions (HTTP server, GenAI client): the server span
// (`POST /v1/chat/completions`), its children `route` (alias and reason),
// `admission` (the key's limits) and one client span per upstream attempt
// (`chat <model>`: target, attempt number, outcome; retries and fallbacks each
// get their own), whose context goes upstream as `traceparent`. The time to
// the first streamed chunk is an event on the attempt and an attribute of the
// server span. Only names, numbers and codes: never prompt or completion text,
// never a key or an upstream credential. A request nothing records (no
// exporter, or not sampled) makes none of this: it only passes its trace
// context upstream.
import type { IncomingHttpHeaders } from 'node:http';
import type { GatewayConfig } from '../config/config.ts';
import { providerTypeName } from '../config/provider-types.ts';
import { ERROR_CATALOGUE } from '../errors/catalogue.ts';
import { SpanKind, type Attributes, type AttributeValue, type Span } from './span.ts';
import { formatTraceparent, newSpanId } from './trace-context.ts';
import type { TraceContext, Tracer } from './tracer.ts';

/** What the upstream dispatcher reports of an attempt (structurally its AttemptRecord). */
export interface AttemptReport {
  targetId: string;
  attempt: number;
  outcome: string;
  status?: number;
  code?: string;
  /** For a target skipped as unsupported: the request parameter it cannot take. */
  param?: string;
  cause?: { kind: string; detail?: string | null | undefined };
}

/** How the request ended, read when its response closes. */
export interface ChatTraceResult {
  /** null when the client left before any answer. */
  status: number | null;
  error: string | undefined;
  promptTokens: number | undefined;
  completionTokens: number | undefined;
}

/** Methods live on the prototype: call them on the trace (`trace.startAttempt(...)`), never detached. */
export interface ChatTrace {
  readonly traceId: string;
  /** False when nothing is kept: every method but startAttempt does nothing, so a caller may skip building their arguments. */
  readonly recording: boolean;
  /** Starts the `route` span. */
  startRoute(): PhaseSpan;
  /** Ends the `route` span with the alias chosen and why. */
  routed(span: PhaseSpan, alias: string, reason: string, stream: boolean): void;
  startAdmission(): PhaseSpan;
  /** Starts an attempt's client span; the headers carry its context to the upstream. */
  startAttempt(targetId: string, attempt: number): Record<string, string>;
  /** An attempt's outcome (or a target skipped); the answering attempt stays open until finishAttempt. */
  attemptDone(report: AttemptReport): void;
  /** The upstream's own model name for the answer. */
  responseModel(model: string): void;
  /** The egress guard's findings (detector, path, action; never the text): one event each on the server span. */
  guardFindings(findings: readonly { readonly detector: string; readonly path: string; readonly action: string }[]): void;
  /** Ends the answering attempt (after the body, or the stream's end). */
  finishAttempt(result: ChatTraceResult): void;
  /** Ends every span still open; the server span last. Idempotent. */
  finish(result: ChatTraceResult): void;
}

const OPERATION = 'chat';
/** The endpoint whose requests a trace describes: its method and route. */
export interface TracedRoute {
  readonly method: string;
  readonly path: string;
  /** gen_ai.operation.name of its spans: `chat` unless given (`embeddings`). */
  readonly operation?: string;
}

/** A target's span attributes and the model its attempt spans are named after. */
export interface TargetDescription {
  attributes: Attributes;
  model: string;
}

/** Per configuration: each target id (`provider/model`) to its span attributes. */
export type TargetDescriber = (targetId: string) => TargetDescription;

/** describeTarget for every target of `config`, each made once, when first asked for. */
export function describeTargets(config: GatewayConfig): TargetDescriber {
  const cache = new Map<string, TargetDescription>();
  return (targetId) => {
    let found = cache.get(targetId);
    if (found !== undefined) return found;
    found = describeTarget(config, targetId);
    // Target ids come from the configuration: the cache is bounded by it.
    cache.set(targetId, found);
    return found;
  };
}

/** The attempt-span attributes of target `targetId` (`provider/model`): a pure function of the configuration, to build once per target. */
export function describeTarget(config: GatewayConfig, targetId: string): TargetDescription {
  const slash = targetId.indexOf('/');
  const providerName = slash === -1 ? targetId : targetId.slice(0, slash);
  const model = slash === -1 ? '' : targetId.slice(slash + 1);
  const provider = config.providers[providerName];
  const attributes: Attributes = { 'portcullis.target': targetId, 'portcullis.provider': providerName };
  if (provider !== undefined) {
    // gen_ai.provider.name (semconv 1.37+) and the older gen_ai.system, for backends that read either.
    const system = provider.type === 'demo' ? 'portcullis.demo' : providerTypeName(provider);
    attributes['gen_ai.provider.name'] = system;
    attributes['gen_ai.system'] = system;
    if (provider.type !== 'demo') Object.assign(attributes, serverAttributes(provider.baseUrl));
  }
  return { attributes, model };
}

function serverAttributes(baseUrl: string): Attributes {
  try {
    const url = new URL(baseUrl);
    const port = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    return { 'server.address': url.hostname.replace(/^\[|\]$/g, ''), 'server.port': port };
  } catch {
    return {};
  }
}

/** The first endpoint's route, the default. */
const CHAT_COMPLETIONS: TracedRoute = { method: 'POST', path: '/v1/chat/completions' };

export function openChatTrace(tracer: Tracer, headers: IncomingHttpHeaders, requestId: string, describe: TargetDescriber, route: TracedRoute = CHAT_COMPLETIONS): ChatTrace {
  const context = tracer.traceOf(headers);
  if (!context.recorded) return new PropagatedChatTrace(context);
  const server = tracer.startServerSpan(context, `${route.method} ${route.path}`, {
    'http.request.method': route.method,
    'http.route': route.path,
    'url.path': route.path,
    'gen_ai.operation.name': route.operation ?? OPERATION,
    'portcullis.request_id': requestId,
  });
  return new RecordedChatTrace(server, describe, route.operation ?? OPERATION);
}

/** What startRoute and startAdmission hand out: the caller sets one attribute and ends it. */
export interface PhaseSpan {
  setAttribute(key: string, value: AttributeValue | undefined | null): void;
  end(): void;
}

/** The route and admission "span" of every request nothing records: one object, shared. */
const UNRECORDED_PHASE: PhaseSpan = Object.freeze({
  setAttribute(): void {},
  end(): void {},
});

/**
 * The trace of a request nothing records (no exporter, or not sampled): one
 * object holding the trace context, its methods on the prototype. It makes no
 * span and reads no attribute; an attempt gets only a new span id for its
 * `traceparent`, so each upstream request still has a parent of its own.
 */
class PropagatedChatTrace implements ChatTrace {
  readonly traceId: string;
  readonly #context: TraceContext;

  constructor(context: TraceContext) {
    this.traceId = context.traceId;
    this.#context = context;
  }

  get recording(): boolean {
    return false;
  }

  startRoute(): PhaseSpan {
    return UNRECORDED_PHASE;
  }

  routed(): void {}

  startAdmission(): PhaseSpan {
    return UNRECORDED_PHASE;
  }

  startAttempt(): Record<string, string> {
    const { traceId, sampled, traceState } = this.#context;
    const sent: Record<string, string> = { traceparent: formatTraceparent(traceId, newSpanId(), sampled) };
    if (traceState !== undefined) sent['tracestate'] = traceState;
    return sent;
  }

  attemptDone(): void {}

  responseModel(): void {}

  guardFindings(): void {}

  finishAttempt(): void {}

  finish(): void {}
}

/** The trace of a recorded request: the server span and its children, as described at the top. */
class RecordedChatTrace implements ChatTrace {
  readonly traceId: string;
  readonly #server: Span;
  readonly #describe: TargetDescriber;
  readonly #startedAt = performance.now();
  #alias: string | undefined = undefined;
  #stream = false;
  /** Attempts started and not yet reported, by `targetId#attempt`. */
  readonly #attempts = new Map<string, Span>();
  /** The attempt that answered: open until its body or stream ends. */
  #committed: Span | undefined = undefined;
  /** Open while the alias is resolved: a request refused there (an unknown model) ends it in finish. */
  #routing: Span | undefined = undefined;
  #finished = false;
  readonly #operation: string;

  constructor(server: Span, describe: TargetDescriber, operation: string) {
    this.traceId = server.traceId;
    this.#server = server;
    this.#describe = describe;
    this.#operation = operation;
  }

  get recording(): boolean {
    return true;
  }

  startRoute(): PhaseSpan {
    this.#routing = this.#server.child('route', SpanKind.Internal);
    return this.#routing;
  }

  routed(span: PhaseSpan, chosen: string, reason: string, isStream: boolean): void {
    this.#alias = chosen;
    this.#stream = isStream;
    span.setAttribute('gen_ai.request.model', chosen);
    span.setAttribute('portcullis.route.reason', reason);
    span.end();
    const server = this.#server;
    server.setAttribute('gen_ai.request.model', chosen);
    server.setAttribute('portcullis.route.reason', reason);
    server.setAttribute('portcullis.stream', isStream);
  }

  startAdmission(): PhaseSpan {
    return this.#server.child('admission', SpanKind.Internal);
  }

  startAttempt(targetId: string, attempt: number): Record<string, string> {
    const target = this.#describe(targetId);
    const span = this.#server.child(`${this.#operation} ${target.model}`, SpanKind.Client, {
      ...target.attributes,
      'gen_ai.operation.name': this.#operation,
      'gen_ai.request.model': this.#alias ?? '',
      'portcullis.attempt': attempt,
    });
    this.#attempts.set(`${targetId}#${attempt}`, span);
    const sent: Record<string, string> = { traceparent: span.traceparent() };
    const state = this.#server.traceState;
    if (state !== undefined) sent['tracestate'] = state;
    return sent;
  }

  attemptDone(report: AttemptReport): void {
    const server = this.#server;
    if (report.outcome === 'skipped_open') {
      server.addEvent('target_skipped', { 'portcullis.target': report.targetId, 'portcullis.reason': 'circuit_open' });
      return;
    }
    if (report.outcome === 'skipped_unsupported') {
      server.addEvent('target_skipped', { 'portcullis.target': report.targetId, 'portcullis.reason': 'unsupported', 'portcullis.param': report.param ?? '' });
      return;
    }
    const key = `${report.targetId}#${report.attempt}`;
    const span = this.#attempts.get(key);
    if (span === undefined) return;
    this.#attempts.delete(key);
    span.setAttribute('portcullis.attempt.outcome', report.outcome);
    if (report.outcome === 'ok') {
      span.setAttribute('gen_ai.response.model', this.#describe(report.targetId).model);
      if (this.#stream) {
        const ms = Math.round((performance.now() - this.#startedAt) * 1000) / 1000;
        span.addEvent('first_token', { 'portcullis.time_to_first_token_ms': ms });
        server.setAttribute('portcullis.time_to_first_token_ms', ms);
      }
      server.setAttribute('portcullis.target', report.targetId);
      this.#committed = span;
      return;
    }
    // The upstream's own status when it answered one; the client-facing code as error.type.
    if (report.cause?.kind === 'http' && /^\d{3}$/.test(report.cause.detail ?? '')) span.setAttribute('http.response.status_code', Number(report.cause.detail));
    span.setError(report.code ?? report.outcome);
    if (report.cause !== undefined) span.setAttribute('portcullis.failure', report.cause.detail ? `${report.cause.kind}:${report.cause.detail}` : report.cause.kind);
    span.end();
  }

  responseModel(model: string): void {
    this.#server.setAttribute('gen_ai.response.model', model);
    this.#committed?.setAttribute('gen_ai.response.model', model);
  }
  guardFindings(findings: readonly { readonly detector: string; readonly path: string; readonly action: string }[]): void {
    for (const f of findings) this.#server.addEvent('guard_finding', { 'portcullis.guard.detector': f.detector, 'portcullis.guard.path': f.path, 'portcullis.guard.action': f.action });
  }


  finishAttempt(result: ChatTraceResult): void {
    if (this.#committed !== undefined) endAttempt(this.#committed, result);
  }

  finish(result: ChatTraceResult): void {
    if (this.#finished) return;
    this.#finished = true;
    const routing = this.#routing;
    if (routing !== undefined && !routing.ended) {
      routing.setError(result.error ?? 'unrouted');
      routing.end();
    }
    if (this.#committed !== undefined) endAttempt(this.#committed, result);
    // An attempt still open: the client left or a shutdown ended it mid-call.
    for (const span of this.#attempts.values()) endAttempt(span, { ...result, error: result.error ?? 'client_aborted' });
    this.#attempts.clear();
    const server = this.#server;
    server.setAttribute('http.response.status_code', result.status ?? undefined);
    server.setAttribute('gen_ai.usage.input_tokens', result.promptTokens);
    server.setAttribute('gen_ai.usage.output_tokens', result.completionTokens);
    // HTTP semantic conventions: a 4xx is the client's error, not the server span's (status unset, error.type kept).
    if (result.error !== undefined) server.setAttribute('error.type', result.error);
    if (result.status === null) server.setError(result.error ?? 'client_gone');
    else if (result.status >= 500) server.setError(result.error ?? String(result.status));
    else if (result.error !== undefined && isServerFailure(result.error)) {
      // The status line went out as a success and the answer was cut after it (a
      // stream ended by a shutdown or by its upstream): HTTP's conventions leave a
      // 2xx unset "unless there was another error", and this is one.
      server.setError(result.error, cutReason(result.error, result.status));
    }
    server.end();
  }
}

function endAttempt(span: Span, result: ChatTraceResult): void {
  if (span.ended) return;
  span.setAttribute('gen_ai.usage.input_tokens', result.promptTokens);
  span.setAttribute('gen_ai.usage.output_tokens', result.completionTokens);
  if (result.error !== undefined) span.setError(result.error);
  span.end();
}

/** A catalogue code that answers 5xx: the gateway's or its upstream's failure, not the client's. */
function isServerFailure(code: string): boolean {
  return Object.hasOwn(ERROR_CATALOGUE, code) && ERROR_CATALOGUE[code as keyof typeof ERROR_CATALOGUE].status >= 500;
}

/** The server span's status message for an answer cut after its status line. */
function cutReason(code: string, status: number): string {
  if (code === 'server_shutting_down') return `the gateway shut down before the stream completed; the ${status} answer was cut`;
  return `the ${status} answer was cut by ${code} before it completed`;
}
