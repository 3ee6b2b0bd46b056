// A Messages client's own request to an Anthropic upstream, and the answer
// back, with nothing lost: the client's validated body goes out as it came
// (key order, thinking blocks and their signatures, cache_control, citations,
// server tools, context_management...), with only the upstream's model, the
// clamped max_tokens and the exchange's `stream` put in; the answer rides back
// whole beside a lenient translation the gateway counts usage from
// (../chat/messages-origin.ts). Pure.
//
// What the provider does not let through is decided here too: a top-level
// field outside the documented request unless the operator named it
// (`messagesPassthrough`), and anthropic-beta values outside the operator's
// list (`anthropicBetas`), which are dropped and named in the access line.

import { setRawErrorEvent, rawEventChunk, setRawAnswer, type MessagesOrigin } from '../chat/messages-origin.ts';
import type { ChatCompletion, ChatCompletionChunk, ChatRequest } from '../chat/types.ts';
import { InvalidRequestError } from '../errors/api-error.ts';
import type { EventStreamEvent } from '../sse/event-stream-parser.ts';
import type { StreamDecoder } from '../upstream/provider.ts';
import { createAnthropicStreamTranslator, type AnthropicStreamTranslator } from './anthropic-stream.ts';
import { fromAnthropicResponse } from './anthropic-response.ts';
import { parseUpstreamJson } from './upstream-json.ts';
import { ANY_BETA } from '../config/anthropic-passthrough-config.ts';
import { DEFAULT_ANTHROPIC_BETAS } from '../config/provider-defaults.ts';

/** An anthropic-version the gateway passes: a date. Not bounded to the
 * versions known today: Anthropic names new ones faster than gateways are
 * released (the SDK sends its own), and refuses one it does not know with
 * its own 400, which the client then reads. */
const VERSION = /^\d{4}-\d{2}-\d{2}$/;
/** One anthropic-beta value as it may go into the header. */
const BETA = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export interface PassthroughPolicy {
  /** Top-level fields outside the documented request that may go through. */
  readonly passthrough: ReadonlySet<string>;
  /** The beta values a client may send; null: any well-formed one. */
  readonly betas: ReadonlySet<string> | null;
  /** The operator's own configured anthropic-beta values, always sent. */
  readonly operatorBetas: readonly string[];
}

/** What one origin's headers come to at one provider. */
interface HeaderPlan {
  headers: Readonly<Record<string, string>> | undefined;
  /** The client's beta values not passed, comma-joined; undefined: none. */
  dropped: string | undefined;
}

/** `betas` undefined: the documented default list; containing "*": any. */
export function passthroughPolicy(passthrough: readonly string[] | undefined, betas: readonly string[] | undefined, operatorBeta: string | undefined): PassthroughPolicy {
  const list = betas ?? DEFAULT_ANTHROPIC_BETAS;
  return {
    passthrough: new Set(passthrough ?? []),
    betas: list.includes(ANY_BETA) ? null : new Set(list),
    operatorBetas: operatorBeta === undefined ? [] : splitBetas(operatorBeta),
  };
}

/** The header's comma-separated values, trimmed, empty ones left out. */
export function splitBetas(header: string): string[] {
  return header
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v.length > 0);
}

/** The client's request as this provider may send it, per origin (each origin is judged once per provider). */
export class MessagesPassthrough {
  readonly #policy: PassthroughPolicy;
  readonly #plans = new WeakMap<MessagesOrigin, HeaderPlan>();

  constructor(policy: PassthroughPolicy) {
    this.#policy = policy;
  }

  /** The 400 for what this provider does not let through; null when it can send `request` (the target's, with its clamped max_tokens). */
  refusal(origin: MessagesOrigin, request: ChatRequest): InvalidRequestError | null {
    for (const field of origin.extraFields) {
      if (!this.#policy.passthrough.has(field)) {
        return new InvalidRequestError(
          `Unknown parameter: '${field}'. The provider behind this model alias does not accept it; ` +
            `an operator allows it by adding "${field}" to messagesPassthrough of the Anthropic provider in the gateway's config.`,
          field,
          'unknown_parameter',
        );
      }
    }
    if (origin.version !== undefined && !VERSION.test(origin.version)) {
      return new InvalidRequestError(
        "Invalid value for header 'anthropic-version': it must be an API version date such as 2023-06-01, or left out.",
        'anthropic-version',
        'invalid_value',
      );
    }
    return thinkingRefusal(origin.body['thinking'], request.max_tokens ?? request.max_completion_tokens);
  }

  /** The upstream body: the client's, in its key order, with the upstream's model,
   * the clamped max_tokens and the exchange's stream. Throws the refusal. */
  encode(origin: MessagesOrigin, request: ChatRequest, stream: boolean): string {
    const refused = this.refusal(origin, request);
    if (refused !== null) throw refused;
    const maxTokens = request.max_tokens ?? request.max_completion_tokens;
    const body: Record<string, unknown> = {};
    for (const key of Object.keys(origin.body)) {
      if (key === 'model') body[key] = request.model;
      else if (key === 'max_tokens') body[key] = maxTokens;
      else if (key === 'thinking') body[key] = thinkingWithin(origin.body[key], maxTokens);
      else if (key === 'stream') {
        if (stream) body[key] = true;
      } else body[key] = origin.body[key];
    }
    if (!('model' in body)) body['model'] = request.model;
    if (!('max_tokens' in body) && maxTokens !== undefined) body['max_tokens'] = maxTokens;
    if (stream && !('stream' in body)) body['stream'] = true;
    return JSON.stringify(body);
  }

  headers(origin: MessagesOrigin): Readonly<Record<string, string>> | undefined {
    return this.#plan(origin).headers;
  }

  dropped(origin: MessagesOrigin): string | undefined {
    return this.#plan(origin).dropped;
  }

  #plan(origin: MessagesOrigin): HeaderPlan {
    let plan = this.#plans.get(origin);
    if (plan === undefined) {
      plan = planHeaders(origin, this.#policy);
      this.#plans.set(origin, plan);
    }
    return plan;
  }
}

/** Anthropic's least thinking budget. */
const MIN_THINKING_BUDGET = 1024;

/** The enabled thinking budget that is not below `maxTokens`, or undefined. */
function budgetOver(thinking: unknown, maxTokens: number | undefined): number | undefined {
  if (maxTokens === undefined || typeof thinking !== 'object' || thinking === null) return undefined;
  const budget = (thinking as { budget_tokens?: unknown }).budget_tokens;
  if ((thinking as { type?: unknown }).type !== 'enabled' || typeof budget !== 'number' || budget < maxTokens) return undefined;
  return budget;
}

/** A cap that leaves no room for Anthropic's least budget below it: the client's 400, naming both (another target may have room). */
function thinkingRefusal(thinking: unknown, maxTokens: number | undefined): InvalidRequestError | null {
  if (budgetOver(thinking, maxTokens) === undefined || maxTokens === undefined || maxTokens - 1 >= MIN_THINKING_BUDGET) return null;
  return new InvalidRequestError(
    `thinking.budget_tokens must be below max_tokens, and this model alias caps max_tokens at ${maxTokens}, which leaves no room for Anthropic's least budget of ${MIN_THINKING_BUDGET}. Turn thinking off, or ask the gateway's operator to raise the alias's maxOutputTokens.`,
    'thinking.budget_tokens',
    'invalid_value',
  );
}

/**
 * `thinking` with a budget below `max_tokens`, as Anthropic requires: an alias
 * cap that lowered max_tokens (Claude Code asks 32000 with a budget of 31999
 * for its older models) lowers the budget with it, to max_tokens - 1
 * (thinkingRefusal has refused a cap with no room for the least budget).
 */
function thinkingWithin(thinking: unknown, maxTokens: number | undefined): unknown {
  if (budgetOver(thinking, maxTokens) === undefined || maxTokens === undefined) return thinking;
  return { ...(thinking as object), budget_tokens: maxTokens - 1 };
}

/** anthropic-version: the client's when it sent one (refusal() checked it);
 * anthropic-beta: the operator's values, then the client's that the list
 * allows, each once. */
function planHeaders(origin: MessagesOrigin, policy: PassthroughPolicy): HeaderPlan {
  let headers: Record<string, string> | undefined;
  if (origin.version !== undefined && VERSION.test(origin.version)) headers = { 'anthropic-version': origin.version };
  if (origin.betas.length === 0) return { headers, dropped: undefined };
  const sent = [...policy.operatorBetas];
  const dropped: string[] = [];
  for (const beta of origin.betas) {
    const allowed = BETA.test(beta) && (policy.betas === null || policy.betas.has(beta));
    if (!allowed) {
      if (!dropped.includes(beta)) dropped.push(beta);
    } else if (!sent.includes(beta)) sent.push(beta);
  }
  if (sent.length > policy.operatorBetas.length) (headers ??= {})['anthropic-beta'] = sent.join(',');
  return { headers, dropped: dropped.length === 0 ? undefined : dropped.map(printable).join(',') };
}

/** A dropped value as the access line prints it: bounded, and nothing but visible ASCII. */
function printable(value: string): string {
  const cut = value.length > 100 ? `${value.slice(0, 100)}...` : value;
  return cut.replace(/[^\x21-\x7e]/g, '?');
}

/** A whole answer: the upstream's own JSON rides on the completion, whose
 * translation (usage with cache tokens, text, tool calls) skips what chat
 * has no shape for (thinking, server tool blocks, citations). */
export function decodePassthrough(text: string): ChatCompletion {
  const parsed = parseUpstreamJson(text);
  const completion = fromAnthropicResponse(parsed);
  // fromAnthropicResponse refuses anything but an object.
  setRawAnswer(completion, parsed as Record<string, unknown>);
  return completion;
}

/** Each upstream event becomes one carrier chunk holding the event exactly as
 * received and what the stream translator makes of it. */
export class PassthroughStreamDecoder implements StreamDecoder {
  readonly #translator: AnthropicStreamTranslator = createAnthropicStreamTranslator();

  get done(): boolean {
    return this.#translator.done;
  }

  push(event: EventStreamEvent, out: ChatCompletionChunk[]): void {
    // After message_stop the message is complete; the rest is not the answer's.
    if (this.#translator.done) return;
    // An error event (or a malformed one) throws the mapped ApiError here; an
    // error event rides on it as it came, for the Messages client to read.
    let translated: ChatCompletionChunk[];
    try {
      translated = this.#translator.push(event, []);
    } catch (error) {
      if (event.event === 'error' && error instanceof Error) setRawErrorEvent(error, { event: 'error', data: event.data, translated: [] });
      throw error;
    }
    out.push(rawEventChunk({ event: event.event, data: event.data, translated }));
  }

  end(out: ChatCompletionChunk[]): void {
    this.#translator.end(out);
  }
}
