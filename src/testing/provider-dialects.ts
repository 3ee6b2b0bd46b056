// How a fake upstream speaks one provider's wire format, for the provider
// adapter contract (./provider-adapter-contract.ts): the answers, streams and
// errors it sends and where it finds what the gateway asked. The built-in
// HTTP types' dialects are here; a host writes one for its own type.

/** What the scripted upstream answers, in the contract's terms. */
export interface ScriptedAnswer {
  readonly id: string;
  /** The model the upstream says answered. */
  readonly model: string;
  /** The answer's text; null for a tool call alone. */
  readonly text: string | null;
  readonly toolCall: { readonly id: string; readonly name: string; readonly arguments: Readonly<Record<string, unknown>> } | null;
  readonly finish: 'stop' | 'tool_calls';
  readonly usage: { readonly input: number; readonly output: number };
}

/** One provider's wire format, as a fake upstream needs it. */
export interface UpstreamDialect {
  /** The body of a whole 2xx answer. */
  answer(answer: ScriptedAnswer): string;
  /**
   * A streamed answer whose text arrives as `pieces`, in order: `events` is
   * the body as server-sent events, each event's full text ("data: ...\n\n");
   * `unfinished` how many leading events make an answer cut short (text
   * started, never finished).
   */
  stream(answer: ScriptedAnswer, pieces: readonly string[]): { events: readonly string[]; unfinished: number };
  /** The body of a non-2xx answer saying `message`. */
  error(status: number, message: string): string;
  /** The model the request body asks for. */
  requestedModel(body: unknown): unknown;
  /** The output-token maximum the request body asks for. */
  requestedMaxTokens(body: unknown): unknown;
  /** The header (lower case) and value the upstream expects for API key `key`. */
  keyHeader(key: string): readonly [string, string];
  /** A request (fields over the contract's plain one) the type refuses before any upstream call, and the param it names; null: it refuses none. */
  readonly refused: { readonly request: Readonly<Record<string, unknown>>; readonly param: string } | null;
}

const sse = (data: unknown, event?: string): string => `${event === undefined ? '' : `event: ${event}\n`}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;

/** OpenAI's chat completions (the "openai" type). */
export const OPENAI_DIALECT: UpstreamDialect = {
  answer: (a) =>
    JSON.stringify({
      id: a.id,
      object: 'chat.completion',
      created: 1_700_000_000,
      model: a.model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: a.text,
            ...(a.toolCall === null ? {} : { tool_calls: [{ id: a.toolCall.id, type: 'function', function: { name: a.toolCall.name, arguments: JSON.stringify(a.toolCall.arguments) } }] }),
          },
          finish_reason: a.finish,
        },
      ],
      usage: { prompt_tokens: a.usage.input, completion_tokens: a.usage.output, total_tokens: a.usage.input + a.usage.output },
    }),
  stream(a, pieces) {
    const chunk = (delta: unknown, finish: string | null, more: Record<string, unknown> = {}): string =>
      sse({ id: a.id, object: 'chat.completion.chunk', created: 1_700_000_000, model: a.model, choices: [{ index: 0, delta, finish_reason: finish }], ...more });
    const events = [chunk({ role: 'assistant', content: '' }, null), ...pieces.map((p) => chunk({ content: p }, null)), chunk({}, a.finish)];
    events.push(sse({ id: a.id, object: 'chat.completion.chunk', created: 1_700_000_000, model: a.model, choices: [], usage: { prompt_tokens: a.usage.input, completion_tokens: a.usage.output, total_tokens: a.usage.input + a.usage.output } }));
    events.push(sse('[DONE]'));
    return { events, unfinished: 2 };
  },
  error: (_status, message) => JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code: null } }),
  requestedModel: (body) => (body as Record<string, unknown>)['model'],
  requestedMaxTokens: (body) => (body as Record<string, unknown>)['max_tokens'],
  keyHeader: (key) => ['authorization', `Bearer ${key}`],
  refused: null,
};

/** Anthropic's Messages API (the "anthropic" type). */
export const ANTHROPIC_DIALECT: UpstreamDialect = {
  answer: (a) =>
    JSON.stringify({
      id: a.id,
      type: 'message',
      role: 'assistant',
      model: a.model,
      content: [
        ...(a.text === null ? [] : [{ type: 'text', text: a.text }]),
        ...(a.toolCall === null ? [] : [{ type: 'tool_use', id: a.toolCall.id, name: a.toolCall.name, input: a.toolCall.arguments }]),
      ],
      stop_reason: a.finish === 'tool_calls' ? 'tool_use' : 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: a.usage.input, output_tokens: a.usage.output },
    }),
  stream(a, pieces) {
    const events = [
      sse({ type: 'message_start', message: { id: a.id, type: 'message', role: 'assistant', model: a.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: a.usage.input, output_tokens: 1 } } }, 'message_start'),
      sse({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start'),
      ...pieces.map((text) => sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }, 'content_block_delta')),
      sse({ type: 'content_block_stop', index: 0 }, 'content_block_stop'),
      sse({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: a.usage.output } }, 'message_delta'),
      sse({ type: 'message_stop' }, 'message_stop'),
    ];
    return { events, unfinished: 3 };
  },
  error: (_status, message) => JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message } }),
  requestedModel: (body) => (body as Record<string, unknown>)['model'],
  requestedMaxTokens: (body) => (body as Record<string, unknown>)['max_tokens'],
  keyHeader: (key) => ['x-api-key', key],
  refused: { request: { temperature: 1.5 }, param: 'temperature' },
};
