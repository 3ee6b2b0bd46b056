// A normalised chat completion (../chat/types.ts) → the Responses API's
// `response` object. Pure. Shapes and their sources: ./response-types.ts.
//
// Output: the message's text and refusal as one message item (an output_text
// part, then a refusal part), then one function_call item per tool call, in
// the upstream's order. Empty text makes no part and a message without parts
// makes no item. A function call keeps the upstream's tool call id as its
// `call_id`, so the function_call_output a client sends back names the
// `tool_call_id` the upstream gave; the item's own `id` is the gateway's.
//
// Status: completed, or incomplete when the output limit (finish_reason
// length → max_output_tokens) or the upstream's filter (content_filter)
// ended the answer; the last item is then marked incomplete when it is the
// message that was cut. A tool call whose arguments the cut left unfinished
// is left out (an `arguments: "{}"` would make a client run the tool on
// nothing); any other call whose arguments are not a JSON object is the
// upstream's fault, a 502.

import { randomBytes } from 'node:crypto';
import type { ChatCompletion, FinishReason, Usage } from '../chat/types.ts';
import { UpstreamError } from '../errors/api-error.ts';
import { isWholeObject } from '../chat/tool-arguments.ts';
import type {
  IncompleteReason,
  ResponseContentPart,
  ResponseEcho,
  ResponseError,
  ResponseFunctionToolCall,
  ResponseObject,
  ResponseOutputItem,
  ResponseStatus,
  ResponseUsage,
} from './response-types.ts';

/** How a function the upstream called is named to the client: a namespace
 * tool's functions are offered flat and mapped back here. */
export interface FunctionName {
  name: string;
  namespace?: string;
}

export interface ResponseOptions {
  /** The response's id; default `resp_` and 48 random hex digits. */
  id?: string;
  /** Seconds since the epoch the request arrived; default now(). */
  createdAt?: number;
  /** The clock, in milliseconds since the epoch; default Date.now (pass a Scheduler's now). */
  now?: () => number;
  /** What the response echoes of the client's request. */
  echo?: ResponseEcho;
  /** The upstream's function name → the name (and namespace) the client offered; names not in it pass as they are. */
  functionNames?: ReadonlyMap<string, FunctionName>;
}

/** `resp_` and 48 hex digits, OpenAI's form; the gateway's own randomness. */
export function generateResponseId(): string {
  return `resp_${randomBytes(24).toString('hex')}`;
}

/**
 * An output item's id: its kind's prefix (`msg`, `fc`), the response id's
 * random part and the item's output index. Unique as the response id is, and
 * the same on the stream and in the whole answer without another random draw.
 */
export function outputItemId(prefix: 'msg' | 'fc', responseId: string, outputIndex: number): string {
  const tail = responseId.startsWith('resp_') ? responseId.slice(5) : responseId;
  return `${prefix}_${tail}_${outputIndex}`;
}

/** finish_reason → why the response is incomplete; null when it is complete. */
export function incompleteReasonOf(finishReason: FinishReason | null): IncompleteReason | null {
  if (finishReason === 'length') return 'max_output_tokens';
  if (finishReason === 'content_filter') return 'content_filter';
  return null;
}

/** Chat usage → Responses usage. Both count cached tokens inside the input;
 * OpenAI-compatible upstreams report no cache writes (their caching has no
 * write price) and the normalised usage keeps no reasoning count, so both are 0. */
export function responseUsageOf(usage: Usage): ResponseUsage {
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: Math.min(usage.prompt_tokens_details.cached_tokens, usage.prompt_tokens), cache_write_tokens: 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.total_tokens,
  };
}


/**
 * A finished tool call's arguments as the function_call's `arguments`: the
 * upstream's string unchanged when it is a JSON object, `{}` when empty
 * (vLLM and llama.cpp send "" for a tool without parameters). Anything else
 * (malformed or cut JSON, an array, a string) is a 502 naming where.
 */
export function functionArgumentsOf(args: string, path: string): string {
  if (args === '') return '{}';
  let value: unknown;
  try {
    value = JSON.parse(args);
  } catch {
    throw functionArgumentsError(path, 'are not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw functionArgumentsError(path, 'are not a JSON object');
  return args;
}

function functionArgumentsError(path: string, what: string): UpstreamError {
  return new UpstreamError(
    'bad_upstream_response',
    `The upstream provider returned tool call arguments that ${what} (at ${path}); a function_call's arguments must be a JSON object.`,
  );
}

/** A function_call item, named as the client offered the function. */
export function functionCallItem(
  id: string,
  status: ResponseFunctionToolCall['status'],
  args: string,
  callId: string,
  upstreamName: string,
  names: ReadonlyMap<string, FunctionName> | undefined,
): ResponseFunctionToolCall {
  const mapped = names?.get(upstreamName);
  const item: ResponseFunctionToolCall = { id, type: 'function_call', status, arguments: args, call_id: callId, name: mapped?.name ?? upstreamName };
  if (mapped?.namespace !== undefined) item.namespace = mapped.namespace;
  return item;
}

export interface ResponseState {
  id: string;
  alias: string;
  createdAt: number;
  status: ResponseStatus;
  completedAt: number | null;
  error: ResponseError | null;
  incomplete: IncompleteReason | null;
  output: ResponseOutputItem[];
  usage: Usage | undefined;
  echo: ResponseEcho | undefined;
}

/** The response object, its keys in the order OpenAI writes them (usage and
 * user, when there are, before metadata). */
export function responseObject(state: ResponseState): ResponseObject {
  const echo = state.echo ?? {};
  const response: Omit<ResponseObject, 'metadata'> & { metadata?: Record<string, string> } = {
    id: state.id,
    object: 'response',
    created_at: state.createdAt,
    status: state.status,
    completed_at: state.completedAt,
    background: false,
    error: state.error,
    incomplete_details: state.incomplete === null ? null : { reason: state.incomplete },
    access_programs: null,
    instructions: echo.instructions ?? null,
    max_output_tokens: echo.max_output_tokens ?? null,
    max_tool_calls: null,
    model: state.alias,
    output: state.output,
    parallel_tool_calls: echo.parallel_tool_calls ?? true,
    previous_response_id: null,
    prompt_cache_key: echo.prompt_cache_key ?? null,
    reasoning: echo.reasoning ?? null,
    safety_identifier: echo.safety_identifier ?? null,
    store: false,
    temperature: echo.temperature ?? null,
    text: echo.text ?? { format: { type: 'text' } },
    tool_choice: echo.tool_choice ?? 'auto',
    tools: echo.tools ?? [],
    top_p: echo.top_p ?? null,
    truncation: echo.truncation ?? 'disabled',
  };
  if (state.usage !== undefined) response.usage = responseUsageOf(state.usage);
  if (echo.user !== undefined) response.user = echo.user;
  response.metadata = echo.metadata ?? {};
  return response as ResponseObject;
}

/** A whole chat completion → the response object, `model` the client's alias.
 * Throws UpstreamError 502 when a finished tool call's arguments are not a JSON object. */
export function toResponseObject(completion: ChatCompletion, alias: string, options: ResponseOptions = {}): ResponseObject {
  const now = options.now ?? Date.now;
  const id = options.id ?? generateResponseId();
  const choice = completion.choices[0];
  const finishReason = choice?.finish_reason ?? null;
  const incomplete = incompleteReasonOf(finishReason);
  const output: ResponseOutputItem[] = [];
  let leftOut = false;
  if (choice !== undefined) {
    const message = choice.message;
    const content: ResponseContentPart[] = [];
    if (typeof message.content === 'string' && message.content !== '') content.push({ type: 'output_text', annotations: [], logprobs: [], text: message.content });
    if (typeof message.refusal === 'string' && message.refusal !== '') content.push({ type: 'refusal', refusal: message.refusal });
    if (content.length > 0) output.push({ id: outputItemId('msg', id, 0), type: 'message', status: 'completed', content, role: 'assistant' });
    const calls = message.tool_calls;
    for (let i = 0; i < calls.length; i++) {
      const call = calls[i] as (typeof calls)[number];
      const args = call.function.arguments;
      if (incomplete !== null && !isWholeObject(args)) {
        leftOut = true;
        continue;
      }
      const whole = functionArgumentsOf(args, `choices[0].message.tool_calls[${i}].function.arguments`);
      output.push(functionCallItem(outputItemId('fc', id, output.length), 'completed', whole, call.id, call.function.name, options.functionNames));
    }
  }
  // The cut fell in the last item unless a call was left out after it.
  const last = output[output.length - 1];
  if (incomplete !== null && !leftOut && last !== undefined && last.type === 'message') last.status = 'incomplete';
  const createdAt = options.createdAt ?? Math.floor(now() / 1000);
  return responseObject({
    id,
    alias,
    createdAt,
    status: incomplete === null ? 'completed' : 'incomplete',
    completedAt: incomplete === null ? Math.floor(now() / 1000) : null,
    error: null,
    incomplete,
    output,
    usage: completion.usage,
    echo: options.echo,
  });
}
