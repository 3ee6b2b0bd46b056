// A provider type as a host would write one, with the public types only: the
// made-up "parrot" JSON API. Its request is {engine, turns, limit}, its answer
// {answer_id, engine, reply: {text, call}, reason, metering: {in, out}}, its
// stream server-sent `piece`, `call` and `finish` events. Its own setting,
// "region" ("eu" or "us"), goes upstream as the x-parrot-region header. It
// has no stop sequences, so a request with `stop` is refused.
import type { ChatCompletion, ChatCompletionChunk, ChatRequest, ProviderAdapter, ProviderCodec, StreamDecoder } from '../../src/api/providers.ts';
import type { ScriptedAnswer, UpstreamDialect } from '../../src/testing/provider-dialects.ts';

export interface ParrotSettings {
  region: 'eu' | 'us';
}

const REGIONS = ['eu', 'us'];

interface ParrotAnswer {
  answer_id: string;
  engine: string;
  reply: { text: string | null; call: { ref: string; fn: string; args: Record<string, unknown> } | null };
  reason: 'done' | 'call' | 'cut';
  metering: { in: number; out: number };
}

const FINISH = { done: 'stop', call: 'tool_calls', cut: 'length' } as const;

function encode(request: ChatRequest, stream: boolean): string {
  const turns = request.messages.map((m) => ({ speaker: m.role, say: typeof m.content === 'string' ? m.content : (m.content ?? []).map((p) => (p.type === 'text' ? p.text : '')).join('') }));
  const tools = request.tools?.map((t) => ({ fn: t.function.name, schema: t.function.parameters ?? {} }));
  return JSON.stringify({ engine: request.model, turns, limit: request.max_tokens, ...(tools === undefined ? {} : { tools }), ...(stream ? { stream: true } : {}) });
}

function decode(text: string): ChatCompletion {
  const a = JSON.parse(text) as ParrotAnswer;
  const call = a.reply.call;
  return {
    id: a.answer_id,
    object: 'chat.completion',
    created: 1_700_000_000,
    model: a.engine,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: a.reply.text, tool_calls: call === null ? [] : [{ id: call.ref, type: 'function', function: { name: call.fn, arguments: JSON.stringify(call.args) } }] },
        finish_reason: FINISH[a.reason],
      },
    ],
    usage: { prompt_tokens: a.metering.in, completion_tokens: a.metering.out, total_tokens: a.metering.in + a.metering.out },
  };
}

class ParrotStream implements StreamDecoder {
  readonly #model: string;
  constructor(model: string) {
    this.#model = model;
  }

  push(event: { event: string; data: string }, out: ChatCompletionChunk[]): void {
    const data = JSON.parse(event.data) as Record<string, unknown>;
    const chunk = (delta: ChatCompletionChunk['choices'][number]['delta'], finish: ChatCompletionChunk['choices'][number]['finish_reason']): ChatCompletionChunk => ({
      id: 'parrot-stream',
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: this.#model,
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    if (event.event === 'piece') out.push(chunk({ content: String(data['text']) }, null));
    else if (event.event === 'finish') {
      const metering = data['metering'] as { in: number; out: number };
      out.push({ ...chunk({}, FINISH[data['reason'] as ParrotAnswer['reason']]), usage: { prompt_tokens: metering.in, completion_tokens: metering.out, total_tokens: metering.in + metering.out } });
    } else throw new Error(`unexpected parrot event ${event.event}: ${event.data}`);
  }

  end(): void {}
}

export const parrotAdapter: ProviderAdapter<ParrotSettings> = {
  type: 'parrot',
  settings: ['region'],
  parse(settings, report) {
    const region = settings['region'];
    if (region === undefined) report('region', 'is required: "eu" or "us"');
    else if (typeof region !== 'string' || !REGIONS.includes(region)) report('region', 'must be "eu" or "us"');
    return { region: region as ParrotSettings['region'] };
  },
  create(settings): ProviderCodec {
    return {
      encode,
      decode,
      streamDecoder: (request) => new ParrotStream(request.model),
      requestHeaders: () => ({ 'x-parrot-region': settings.region }),
      refusal: (request) => (request.stop !== undefined ? { param: 'stop', message: 'parrot has no stop sequences; leave stop out' } : null),
    };
  },
};

const sse = (event: string, data: unknown): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

const answerOf = (a: ScriptedAnswer): ParrotAnswer => ({
  answer_id: a.id,
  engine: a.model,
  reply: { text: a.text, call: a.toolCall === null ? null : { ref: a.toolCall.id, fn: a.toolCall.name, args: { ...a.toolCall.arguments } } },
  reason: a.finish === 'tool_calls' ? 'call' : 'done',
  metering: { in: a.usage.input, out: a.usage.output },
});

/** How a fake parrot upstream speaks. */
export const PARROT_DIALECT: UpstreamDialect = {
  answer: (a) => JSON.stringify(answerOf(a)),
  stream: (a, pieces) => ({
    events: [...pieces.map((text) => sse('piece', { text })), sse('finish', { reason: 'done', metering: { in: a.usage.input, out: a.usage.output } })],
    unfinished: 1,
  }),
  error: (_status, message) => JSON.stringify({ message }),
  requestedModel: (body) => (body as Record<string, unknown>)['engine'],
  requestedMaxTokens: (body) => (body as Record<string, unknown>)['limit'],
  keyHeader: (key) => ['x-parrot-key', key],
  refused: { request: { stop: ['\n\n'] }, param: 'stop' },
};
