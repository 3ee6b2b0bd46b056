// POST /v1/responses, OpenAI's Responses door, as an endpoint of the pipeline
// (./pipeline.ts). The body is validated against the documented request
// (../responses/response-request-validator.ts) and translated to the
// gateway's chat shape (../responses/response-to-chat.ts), which routing,
// limits and the reservation read and an upstream that speaks only chat
// completions receives; the client's own body rides along
// (../chat/responses-origin.ts) for an upstream that speaks Responses.
// Answers and streams go back in the Responses shapes; errors are OpenAI's
// envelope, as on the chat door.
import { rawAnswer } from '../chat/messages-origin.ts';
import { responsesOrigin, setResponsesOrigin } from '../chat/responses-origin.ts';
import type { FieldPolicy, RequestFieldName } from '../chat/request-fields.ts';
import type { ChatRequest } from '../chat/types.ts';
import { ApiError, type InvalidRequestError } from '../errors/api-error.ts';
import type { JsonObserver } from '../json/json-options.ts';
import { toResponseObject } from '../responses/response-answer.ts';
import { passthroughFields, validateResponsesRequest } from '../responses/response-request-validator.ts';
import { toChatRequest } from '../responses/response-to-chat.ts';
import type { ResponseEcho } from '../responses/response-types.ts';
import { unacceptedFieldError, unacceptedFields } from './door-fields.ts';
import type { Endpoint } from './endpoint.ts';
import { continuedBody, storedResponseOf } from './stored-conversation.ts';
import type { ResolvedConversation, ResponseStore } from '../state/response-store-port.ts';
import { pumpDoorStream } from './door-stream-pump.ts';
import { responsesDoorStream } from './responses-stream.ts';

/** The request's structure is checked once parsed; the parser's own bounds (size, depth, members) hold while it arrives. */
const NO_OBSERVER: JsonObserver = {};

/** The fields of the client's request a response echoes back, as the SDKs read them. */
const ECHOED = ['instructions', 'tools', 'tool_choice', 'parallel_tool_calls', 'temperature', 'top_p', 'max_output_tokens', 'text', 'reasoning', 'metadata', 'prompt_cache_key', 'safety_identifier', 'truncation', 'user'] as const;

/** What a request that continues a stored conversation brings to its answer's record. */
interface Turn {
  readonly previous: { readonly id: string; readonly conversation: ResolvedConversation } | null;
  /** The request's own input, before the stored items were put in front of it. */
  readonly input: unknown;
}

export interface ResponsesEndpointOptions {
  /** The gateway's response store (responses.store.enabled); absent: stateless. */
  readonly store?: ResponseStore | undefined;
  /** A response that could not be stored (the store full, a conversation too long): the answer says store false. */
  readonly onStoreProblem?: (problem: string) => void;
  /** Top-level fields some provider passes through unchecked. */
  readonly extraFields: ReadonlySet<string>;
  /** The configuration's policy on OpenAI's optional chat fields: what the translation may carry to a chat-only upstream. */
  readonly policy: FieldPolicy;
  /** The clock (milliseconds since the epoch) of the responses' created_at. */
  readonly now: () => number;
}

export function createResponsesEndpoint(options: ResponsesEndpointOptions): Endpoint {
  const { extraFields, policy, now, store } = options;
  /** The continued body prepare() made → the turn it continues; the request validate() made → its turn. */
  const continued = new WeakMap<object, Turn>();
  const turns = new WeakMap<ChatRequest, Turn>();
  /** A whole response, before it goes out: its previous_response_id; stored for the key when the request asked (store: true). */
  async function keep(response: Record<string, unknown>, request: ChatRequest, keyId: string): Promise<void> {
    const origin = responsesOrigin(request);
    const turn = turns.get(request);
    if (store === undefined || origin === undefined || turn === undefined) return;
    response['previous_response_id'] = turn.previous?.id ?? null;
    if (origin.body['store'] !== true) return;
    const record = storedResponseOf({
      id: String(response['id']),
      keyId,
      nowMs: now(),
      ttlMs: store.limits.ttlMs,
      previous: turn.previous,
      input: turn.input,
      output: Array.isArray(response['output']) ? response['output'] : [],
      usage: response['usage'],
    });
    try {
      await store.put(record);
      response['store'] = true;
    } catch (error) {
      // The answer is made and paid for: it goes out, said not stored, and the operator learns why.
      options.onStoreProblem?.(error instanceof Error ? error.name : typeof error);
    }
  }

  return {
    route: { method: 'POST', path: '/v1/responses' },
    keyHeaders: 'bearer',
    door: 'responses',
    observer: () => NO_OBSERVER,
    async prepare(body, keyId) {
      if (store === undefined || typeof body !== 'object' || body === null) return body;
      const previousId = (body as Record<string, unknown>)['previous_response_id'];
      if (typeof previousId !== 'string') return body;
      const conversation = await store.resolveConversation(previousId, keyId);
      // Another key's response, an expired one and one never made answer alike.
      if (conversation === null) throw new ApiError('response_not_found', `No stored response '${previousId.slice(0, 64)}' for this API key (it may have expired).`, { param: 'previous_response_id' });
      const next = continuedBody(body as Record<string, unknown>, conversation);
      continued.set(next, { previous: { id: previousId, conversation }, input: (body as Record<string, unknown>)['input'] });
      return next;
    },
    guarded(original, masked) {
      // The masked body continues the same stored turn; its own input is what follows the stored items.
      const turn = typeof original === 'object' && original !== null ? continued.get(original) : undefined;
      if (turn === undefined || turn.previous === null || typeof masked !== 'object' || masked === null) return;
      const input = (masked as Record<string, unknown>)['input'];
      continued.set(masked, { previous: turn.previous, input: Array.isArray(input) ? input.slice(turn.previous.conversation.items.length) : input });
    },
    validate(body) {
      const validated = validateResponsesRequest(body, { extraFields, responseStore: store !== undefined });
      const translation = toChatRequest(validated);
      const record = validated as unknown as Record<string, unknown>;
      setResponsesOrigin(translation.request, {
        body: record,
        untranslatable: translation.untranslatable ?? applyFieldPolicy(translation.request, policy),
        extraFields: passthroughFields(record),
        leftOutTools: translation.leftOutTools,
        toolNames: translation.namespacedTools,
      });
      const turn = typeof body === 'object' && body !== null ? continued.get(body) : undefined;
      turns.set(translation.request, turn ?? { previous: null, input: record['input'] });
      return translation.request;
    },
    answer(completion, alias, request) {
      const raw = rawAnswer(completion);
      if (raw !== undefined) {
        raw['model'] = alias;
        return raw;
      }
      return toResponseObject(completion, alias, { now, ...echoOptions(request) });
    },
    answered: (answer, request, keyId) => keep(answer as Record<string, unknown>, request, keyId),
    stream: (upstream, call, request, alias) =>
      pumpDoorStream(
        upstream,
        responsesDoorStream({ alias, now, ...echoOptions(request) }, store === undefined ? undefined : (response) => keep(response, request, call.key?.id ?? '')),
        call,
      ),
  };

}

/** The Responses field each optional chat field of the translation comes from. */
const TRANSLATED_FROM: Readonly<Partial<Record<RequestFieldName, string>>> = {
  json_schema: 'text.format',
  parallel_tool_calls: 'parallel_tool_calls',
  reasoning_effort: 'reasoning.effort',
};

/**
 * The translation's optional chat fields the alias does not accept
 * (../chat/request-fields.ts): `reasoning_effort` (a hint of how long to
 * think; the answer means the same without it) and `parallel_tool_calls:
 * true` (chat completions' own default) are left out; anything else (a
 * json_schema, parallel_tool_calls false) is the 400 naming the setting.
 * An upstream that speaks Responses takes the client's body regardless.
 */
function applyFieldPolicy(request: ChatRequest, policy: FieldPolicy): InvalidRequestError | null {
  for (const name of unacceptedFields(request, policy)) {
    if (name === 'reasoning_effort') delete request.reasoning_effort;
    else if (name === 'parallel_tool_calls' && request.parallel_tool_calls === true) delete request.parallel_tool_calls;
    else return unacceptedFieldError(TRANSLATED_FROM[name] ?? name, name, request, policy, 'An upstream that speaks Responses');
  }
  return null;
}

/** What a response echoes of the client's request, and how the translation's function names map back. */
function echoOptions(request: ChatRequest): { echo?: ResponseEcho; functionNames?: ReadonlyMap<string, { name: string; namespace?: string }> } {
  const origin = responsesOrigin(request);
  if (origin === undefined) return {};
  const echo: Record<string, unknown> = {};
  for (const key of ECHOED) if (origin.body[key] !== undefined) echo[key] = origin.body[key];
  return { echo: echo as ResponseEcho, functionNames: origin.toolNames };
}
