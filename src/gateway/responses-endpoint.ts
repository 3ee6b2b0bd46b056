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
import type { ChatRequest } from '../chat/types.ts';
import type { JsonObserver } from '../json/json-options.ts';
import { toResponseObject } from '../responses/response-answer.ts';
import { passthroughFields, validateResponsesRequest } from '../responses/response-request-validator.ts';
import { toChatRequest } from '../responses/response-to-chat.ts';
import type { ResponseEcho } from '../responses/response-types.ts';
import type { Endpoint } from './endpoint.ts';
import { pumpDoorStream } from './door-stream-pump.ts';
import { responsesDoorStream } from './responses-stream.ts';

/** The request's structure is checked once parsed; the parser's own bounds (size, depth, members) hold while it arrives. */
const NO_OBSERVER: JsonObserver = {};

/** The fields of the client's request a response echoes back, as the SDKs read them. */
const ECHOED = ['instructions', 'tools', 'tool_choice', 'parallel_tool_calls', 'temperature', 'top_p', 'max_output_tokens', 'text', 'reasoning', 'metadata', 'prompt_cache_key', 'safety_identifier', 'truncation', 'user'] as const;

export interface ResponsesEndpointOptions {
  /** Top-level fields some provider passes through unchecked. */
  readonly extraFields: ReadonlySet<string>;
  /** The clock (milliseconds since the epoch) of the responses' created_at. */
  readonly now: () => number;
}

export function createResponsesEndpoint(options: ResponsesEndpointOptions): Endpoint {
  const { extraFields, now } = options;
  return {
    route: { method: 'POST', path: '/v1/responses' },
    keyHeaders: 'bearer',
    observer: () => NO_OBSERVER,
    validate(body) {
      const validated = validateResponsesRequest(body, { extraFields });
      const translation = toChatRequest(validated);
      const record = validated as unknown as Record<string, unknown>;
      setResponsesOrigin(translation.request, {
        body: record,
        untranslatable: translation.untranslatable,
        extraFields: passthroughFields(record),
        leftOutTools: translation.leftOutTools,
        toolNames: translation.namespacedTools,
      });
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
    stream: (upstream, call, request, alias) => pumpDoorStream(upstream, responsesDoorStream({ alias, now, ...echoOptions(request) }), call),
  };
}

/** What a response echoes of the client's request, and how the translation's function names map back. */
function echoOptions(request: ChatRequest): { echo?: ResponseEcho; functionNames?: ReadonlyMap<string, { name: string; namespace?: string }> } {
  const origin = responsesOrigin(request);
  if (origin === undefined) return {};
  const echo: Record<string, unknown> = {};
  for (const key of ECHOED) if (origin.body[key] !== undefined) echo[key] = origin.body[key];
  return { echo: echo as ResponseEcho, functionNames: origin.toolNames };
}
