// POST /v1/chat/completions as an endpoint of the pipeline (./pipeline.ts):
// its body is already the gateway's request shape, so validation is the
// contract's rules (../chat/request-validator.ts) with the configuration's
// field policy (../chat/request-fields.ts), and a whole answer only names the
// alias as its model.
import type { FieldPolicy } from '../chat/request-fields.ts';
import { createChatRequestObserver, validateChatRequest } from '../chat/request-validator.ts';
import type { Endpoint } from './endpoint.ts';

/** The endpoint for one configuration's field policy. */
export function createChatCompletionsEndpoint(policy: FieldPolicy): Endpoint {
  const observer = createChatRequestObserver(policy);
  return {
    route: { method: 'POST', path: '/v1/chat/completions' },
    observer: () => observer,
    validate: (body) => validateChatRequest(body, policy),
    answer(completion, alias) {
      completion.model = alias;
      return completion;
    },
  };
}
