// A Responses client's own request to an upstream that speaks Responses
// (OpenAI, Azure OpenAI's v1 API, vLLM), and the answer back, with nothing
// lost: the client's validated body goes out as it came (key order, reasoning
// items and their encrypted_content, hosted tools, include...), with only the
// upstream's model, the capped max_output_tokens, the exchange's `stream`
// and `store: false` put in; the answer rides back whole beside a lenient
// translation the gateway counts usage from (./openai-responses-answer.ts).
// Pure.
//
// `store` is always false upstream: what the gateway keeps of a conversation
// is in its own store, scoped to the key that made it; a response stored at
// the upstream would be readable by any other user of the upstream account
// and resolvable on that account alone, so a fallback could not continue it.
//
// What the provider does not let through is decided here too: a top-level
// field outside the documented request unless the operator named it
// (`responsesPassthrough`).

import { rawEventChunk, setRawAnswer, setRawErrorEvent } from '../chat/messages-origin.ts';
import type { ResponsesOrigin } from '../chat/responses-origin.ts';
import type { ChatCompletion, ChatCompletionChunk, ChatRequest } from '../chat/types.ts';
import { DEFAULT_RESPONSES_HOSTED_TOOLS, UPSTREAM_RUN_TOOLS } from '../config/responses-passthrough-config.ts';
import { InvalidRequestError } from '../errors/api-error.ts';
import type { EventStreamEvent } from '../sse/event-stream-parser.ts';
import type { StreamDecoder } from '../upstream/provider.ts';
import { badUpstreamResponseError } from '../upstream/upstream-errors.ts';
import { fromResponsesAnswer, ResponsesStreamTranslator } from './openai-responses-answer.ts';
import { parseUpstreamJson } from './upstream-json.ts';

/** What a Responses event's name is made of (response.output_text.delta, error). */
const EVENT_NAME = /^[a-z0-9_.]{1,128}$/;

/** The one event of some servers' streams that is not JSON: never part of a Responses stream's grammar. */
const DONE = '[DONE]';

/** The client's Responses request as one provider may send it. */
export class ResponsesPassthrough {
  /** Top-level fields outside the documented request that may go through. */
  readonly #allowed: ReadonlySet<string>;
  /** The upstream-run tools a client may have the upstream run. */
  readonly #hostedTools: ReadonlySet<string>;

  constructor(allowed: readonly string[] | undefined, hostedTools: readonly string[] = DEFAULT_RESPONSES_HOSTED_TOOLS) {
    this.#allowed = new Set(allowed ?? []);
    this.#hostedTools = new Set(hostedTools);
  }

  /** The 400 for a field this provider does not let through; null when it can send the body. */
  refusal(origin: ResponsesOrigin): InvalidRequestError | null {
    for (const field of origin.extraFields) {
      if (!this.#allowed.has(field)) {
        return new InvalidRequestError(
          `Unknown parameter: '${field}'. The provider behind this model alias does not accept it; ` +
            `an operator allows it by adding "${field}" to responsesPassthrough of the OpenAI provider in the gateway's config.`,
          field,
          'unknown_parameter',
        );
      }
    }
    return accountRefusal(origin.body, this.#hostedTools);
  }

  /** The upstream body: the client's, in its key order, with the upstream's
   * model, the capped max_output_tokens, the exchange's stream and store
   * false. Throws the refusal. */
  encode(origin: ResponsesOrigin, request: ChatRequest, stream: boolean): string {
    const refused = this.refusal(origin);
    if (refused !== null) throw refused;
    const cap = request.max_tokens ?? request.max_completion_tokens;
    const body: Record<string, unknown> = {};
    for (const key of Object.keys(origin.body)) {
      const value = origin.body[key];
      if (key === 'model') body[key] = request.model;
      else if (key === 'max_output_tokens') body[key] = cap ?? value;
      else if (key === 'store') body[key] = false;
      else if (key === 'stream') {
        if (stream) body[key] = true;
      } else if (key === 'stream_options') {
        // Only a streamed request may carry it.
        if (stream) body[key] = value;
      } else body[key] = value;
    }
    if (!('model' in body)) body['model'] = request.model;
    if (!('max_output_tokens' in body) && cap !== undefined) body['max_output_tokens'] = cap;
    if (!('store' in body)) body['store'] = false;
    if (stream && !('stream' in body)) body['stream'] = true;
    withEncryptedReasoning(body);
    return JSON.stringify(body);
  }
}

const ENCRYPTED_REASONING = 'reasoning.encrypted_content';

/**
 * What the client may not reach through the upstream's account: a tool the
 * upstream runs (billed there per call, outside the key's usage, and able to
 * reach what the account holds) unless the operator lists it, and anything the
 * account stores (a file or an image by file_id, a stored prompt, an existing
 * container), which every key sharing the account could otherwise use.
 */
function accountRefusal(body: Readonly<Record<string, unknown>>, hostedTools: ReadonlySet<string>): InvalidRequestError | null {
  const tools = body['tools'];
  if (Array.isArray(tools)) {
    for (let i = 0; i < tools.length; i++) {
      const tool = tools[i] as Record<string, unknown>;
      const type = tool['type'];
      if (typeof type !== 'string' || !UPSTREAM_RUN_TOOLS.includes(type)) continue;
      if (!hostedTools.has(type)) {
        return new InvalidRequestError(
          `The tool '${type}' runs in the upstream's account, billed there per use and outside this key's usage; the provider behind this model alias does not allow it. An operator allows it by adding "${type}" to responsesHostedTools of the OpenAI provider in the gateway's config.`,
          `tools[${i}].type`,
          'unsupported_parameter',
        );
      }
      if (type === 'code_interpreter' && typeof tool['container'] === 'string') return accountReference(`tools[${i}].container`, 'an existing container');
    }
  }
  if (body['prompt'] !== undefined && body['prompt'] !== null) return accountReference('prompt', 'a stored prompt');
  const input = body['input'];
  if (Array.isArray(input)) {
    for (let i = 0; i < input.length; i++) {
      const content = (input[i] as Record<string, unknown>)['content'];
      if (!Array.isArray(content)) continue;
      for (let j = 0; j < content.length; j++) {
        const part = content[j] as Record<string, unknown>;
        if (typeof part['file_id'] === 'string') return accountReference(`input[${i}].content[${j}].file_id`, 'a file stored in it');
      }
    }
  }
  return null;
}

function accountReference(param: string, what: string): InvalidRequestError {
  return new InvalidRequestError(
    `'${param}' names ${what} in the upstream's account, which every key sharing that account could use: the gateway does not pass such references. Send the content itself instead.`,
    param,
    'unsupported_parameter',
  );
}

/**
 * With `store: false` upstream a reasoning model's reasoning is not kept there,
 * so a client that replays a reasoning item by its id alone (the Agents SDK,
 * the openai SDK's defaults) would be refused on its next turn: a request that
 * reasons (it sets `reasoning`, or its input holds reasoning items) asks for
 * the encrypted reasoning in the answer, which those clients send back whole.
 * Not for others: a model that does not reason refuses the include.
 */
function withEncryptedReasoning(body: Record<string, unknown>): void {
  const input = body['input'];
  const reasons = body['reasoning'] !== undefined && body['reasoning'] !== null ? true : Array.isArray(input) && input.some((item) => typeof item === 'object' && item !== null && (item as { type?: unknown }).type === 'reasoning');
  if (!reasons) return;
  const include = Array.isArray(body['include']) ? (body['include'] as unknown[]) : [];
  if (!include.includes(ENCRYPTED_REASONING)) body['include'] = [...include, ENCRYPTED_REASONING];
}

/** A whole answer: the upstream's own JSON rides on the completion beside its translation. */
export function decodeResponsesPassthrough(text: string): ChatCompletion {
  const parsed = parseUpstreamJson(text);
  const completion = fromResponsesAnswer(parsed);
  // fromResponsesAnswer refuses anything but an object.
  setRawAnswer(completion, parsed as Record<string, unknown>);
  return completion;
}

/** Each upstream event becomes one carrier chunk holding the event exactly as
 * received and what the translator makes of it. The body is read to its end
 * after the terminal event (the connection is pooled), its events ignored. */
export class ResponsesPassthroughStreamDecoder implements StreamDecoder {
  readonly #translator = new ResponsesStreamTranslator();

  get done(): boolean {
    return false;
  }

  push(event: EventStreamEvent, out: ChatCompletionChunk[]): void {
    if (this.#translator.finished || event.data === DONE) return;
    const parsed = parseUpstreamJson(event.data);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw badUpstreamResponseError('The upstream provider sent a stream event that is not a JSON object.');
    }
    const data = parsed as Record<string, unknown>;
    // Servers that send no `event:` field name the event in its data's type; a name is written as the
    // client's `event:` line, so one that is not a plain event name (a line break would add lines) is the upstream's fault.
    const name = event.event === 'message' && typeof data['type'] === 'string' ? data['type'] : event.event;
    if (!EVENT_NAME.test(name)) throw badUpstreamResponseError('The upstream provider sent a stream event whose name is not an event name.');
    const translated: ChatCompletionChunk[] = [];
    try {
      this.#translator.push(data, translated);
    } catch (error) {
      // response.failed and error end the stream; the event rides on the error as it came, for the Responses client to read.
      if (error instanceof Error) setRawErrorEvent(error, { event: name, data: event.data, translated: [] });
      throw error;
    }
    out.push(rawEventChunk({ event: name, data: event.data, translated }));
  }

  end(): void {
    this.#translator.end();
  }
}
