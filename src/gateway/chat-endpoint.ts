// POST /v1/chat/completions as an endpoint of the pipeline (./pipeline.ts):
// its body is already the gateway's request shape, so validation is the
// contract's rules (../chat/request-validator.ts) and a whole answer only
// names the alias as its model.
import { createChatRequestObserver, validateChatRequest } from '../chat/request-validator.ts';
import type { Endpoint } from './endpoint.ts';

export const chatCompletionsEndpoint: Endpoint = {
  route: { method: 'POST', path: '/v1/chat/completions' },
  observer: createChatRequestObserver,
  validate: validateChatRequest,
  answer(completion, alias) {
    completion.model = alias;
    return completion;
  },
};
