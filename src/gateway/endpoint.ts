// What one door of the gateway (an endpoint: POST /v1/chat/completions first)
// brings to the shared pipeline (./pipeline.ts): how its body is checked as it
// arrives and turned into the request the gateway routes, limits and sends,
// and how an answer goes back in its own shape. Everything else (keys,
// routing, limits, upstream dispatch, the stream's wire rules, charging,
// access line, trace) is the pipeline's, the same for every endpoint.
import type { ChatCompletion, ChatRequest } from '../chat/types.ts';
import type { JsonObserver } from '../json/json-options.ts';

export interface Endpoint {
  /** The method and path it answers (the trace's server span and its http.route). */
  readonly route: { readonly method: string; readonly path: string };
  /** Checks the body's structure while it is parsed; one per request. */
  observer(): JsonObserver;
  /** The parsed body as the gateway's request; throws the client's 400 (InvalidRequestError). */
  validate(body: unknown): ChatRequest;
  /** A whole answer in the endpoint's shape, `model` being the alias the client asked through. */
  answer(completion: ChatCompletion, alias: string): unknown;
}
