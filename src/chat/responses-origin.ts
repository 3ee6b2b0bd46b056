// A chat request that came in through the Responses door (POST /v1/responses)
// carries its origin beside the gateway's own shape, as a Messages request
// does (./messages-origin.ts): routing, limits and the reservation read the
// ChatRequest; an upstream that speaks only chat completions receives the
// translation; an upstream that speaks Responses receives the client's own
// body (validated, with the upstream's model and the capped
// max_output_tokens), so reasoning items and their encrypted_content survive.
// The upstream's own answer and events ride back on the completion and on
// carrier chunks exactly as for the Messages door (RAW_ANSWER, RAW_EVENT in
// ./messages-origin.ts: they are the door-independent part).
import type { InvalidRequestError } from '../errors/api-error.ts';
import type { ChatRequest } from './types.ts';

export const RESPONSES_ORIGIN: unique symbol = Symbol('portcullis.responsesOrigin');

export interface ResponsesOrigin {
  /** The client's validated Responses body as parsed; its `model` is the alias the client named. */
  readonly body: Readonly<Record<string, unknown>>;
  /** Why an upstream that speaks only chat completions cannot take it (an
   * encrypted reasoning item, a hosted tool's call in the input): the 400
   * naming it; null when the translation says everything. */
  readonly untranslatable: InvalidRequestError | null;
  /** Top-level fields outside the documented request that the body carries:
   * only a provider that allows them by name may receive them. */
  readonly extraFields: readonly string[];
  /** Hosted tools the translation leaves out of the offer (`web_search`, ...), for the access line and a response header. */
  readonly leftOutTools: readonly string[];
  /** The translation's function name → the namespace tool's function it stands for (a `namespace` tool's functions are offered as plain functions). */
  readonly toolNames: ReadonlyMap<string, { readonly namespace: string; readonly name: string }>;
}

export type ResponsesChatRequest = ChatRequest & { [RESPONSES_ORIGIN]?: ResponsesOrigin };

/** The Responses origin of `request`, or undefined for a request of another door. */
export function responsesOrigin(request: ChatRequest): ResponsesOrigin | undefined {
  return (request as ResponsesChatRequest)[RESPONSES_ORIGIN];
}

/** Marks `request` as having come through the Responses door. */
export function setResponsesOrigin(request: ChatRequest, origin: ResponsesOrigin): void {
  (request as ResponsesChatRequest)[RESPONSES_ORIGIN] = origin;
}
