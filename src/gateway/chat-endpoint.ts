// POST /v1/chat/completions as an endpoint of the pipeline (./pipeline.ts):
// its body is already the gateway's request shape, so validation is the
// contract's rules (../chat/request-validator.ts) with the configuration's
// field policy (../chat/request-fields.ts), a whole answer only names the
// alias as its model, and a stream is the chat pump's (./event-stream-pump.ts).
import type { FieldPolicy } from '../chat/request-fields.ts';
import { createChatRequestObserver, validateChatRequest } from '../chat/request-validator.ts';
import type { Endpoint } from './endpoint.ts';
import { pumpEventStream } from './event-stream-pump.ts';

/** The endpoint for one configuration's field policy. */
export function createChatCompletionsEndpoint(policy: FieldPolicy): Endpoint {
  const observer = createChatRequestObserver(policy);
  return {
    route: { method: 'POST', path: '/v1/chat/completions' },
    keyHeaders: 'bearer',
    door: 'chat',
    observer: () => observer,
    validate: (body) => validateChatRequest(body, policy),
    answer(completion, alias) {
      completion.model = alias;
      return completion;
    },
    stream: (upstream, call, request, alias) => pumpEventStream(upstream, { alias, includeUsage: request.stream_options?.include_usage === true }, call),
  };
}
