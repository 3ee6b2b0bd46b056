// What one door of the gateway (an endpoint: POST /v1/chat/completions,
// POST /v1/messages) brings to the shared pipeline (./pipeline.ts): how its
// body is checked as it arrives and turned into the request the gateway
// routes, limits and sends, and how an answer, a stream and an error go back
// in its own shape (its error envelope is the HTTP shell's, chosen by path:
// ./messages-endpoint.ts MESSAGES_ERROR_SHAPE). Everything else (keys, routing, limits, upstream dispatch,
// charging, access line, trace) is the pipeline's, the same for every door.
import type { IncomingHttpHeaders } from 'node:http';
import type { ChatCompletion, ChatRequest } from '../chat/types.ts';
import type { JsonObserver } from '../json/json-options.ts';
import type { UpstreamStream } from '../upstream/provider.ts';
import type { Call } from './call.ts';
import type { ApiDoor } from '../api/keys.ts';

export interface Endpoint {
  /** The method and path it answers (the trace's server span and its http.route). */
  readonly route: { readonly method: string; readonly path: string };
  /** Where the client's key may be: `bearer` (Authorization only) or `anthropic` (x-api-key, or Authorization). */
  readonly keyHeaders: 'bearer' | 'anthropic';
  /** Which door this is, for a host's Authenticator. */
  readonly door: ApiDoor;
  /** Checks the body's structure while it is parsed; one per request. */
  observer(): JsonObserver;
  /** Before validation, for the key that sent it: the body the door validates (the Responses
   * door puts a stored conversation before the input of a request that continues it). */
  prepare?(body: unknown, keyId: string): Promise<unknown>;
  /** The egress guard masked `original` (what prepare() returned) into `masked`, which is validated next in its place. */
  guarded?(original: unknown, masked: unknown): void;
  /** The parsed body as the gateway's request; throws the client's 400 (InvalidRequestError). */
  validate(body: unknown, headers: IncomingHttpHeaders): ChatRequest;
  /** After a whole answer is made and before it is sent (the Responses door stores it when asked). */
  answered?(answer: unknown, request: ChatRequest, keyId: string): Promise<void>;
  /** A whole answer to `request` in the endpoint's shape, `model` being the alias the client asked through. */
  answer(completion: ChatCompletion, alias: string, request: ChatRequest): unknown;
  /** Streams `upstream` to the client through `call`; resolves true when the answer ended cleanly. */
  stream(upstream: UpstreamStream, call: Call, request: ChatRequest, alias: string): Promise<boolean>;
}
