// Two strict fake upstreams that script an agent's tool round trip, for the
// tests that run Claude Code and the SDKs through the gateway (or straight at
// the fake): asked with `readPath`, the first answer calls the tool `Read` on
// that path, and once the tool's result comes back the answer quotes it
// (quoteAnswer); without `readPath` every answer is PLAIN_ANSWER.
// - startScriptedAnthropic: POST /v1/messages (streamed or not, `?beta=true`
//   allowed) and /v1/messages/count_tokens, the key (`x-api-key` or Bearer)
//   and `anthropic-version` required; every request held to
//   ./anthropic-messages-constraints.ts; optionally a thinking block with a
//   signature opens each answer, and a signature that comes back altered is
//   refused as Anthropic refuses it.
// - startScriptedOpenAI: POST /v1/chat/completions with a Bearer key, held to
//   ./openai-chat-constraints.ts; the tool call as `tool_calls` (arguments in
//   pieces), its result expected back as a `tool` message. Besides `readPath`
//   it takes any `toolCall` (Codex's exec_command: execCommandCall).
// - startScriptedResponses (./scripted-responses.ts): the same script over
//   POST /v1/responses.
// A request that breaks a constraint is answered 400 in the provider's shape
// and its reason kept in `violations`, for the test to assert empty.
import type { ServerResponse } from 'node:http';
import { anthropicEvents, writeAnthropicAnswer, writeAnthropicError, type AnswerBlock } from './anthropic-answers.ts';
import { messagesRequestViolation } from './anthropic-messages-constraints.ts';
import { startFakeUpstream, type FakeUpstream, type ReceivedRequest } from '../../src/testing/fake-upstream.ts';
import { chatRequestViolation } from './openai-chat-constraints.ts';

export const SCRIPTED_UPSTREAM_KEY = 'sk-scripted-upstream-0123456789';
export const PLAIN_ANSWER = 'Hello from the fake upstream.';
export const THINKING_TEXT = 'The user wants a greeting.';
/** The tool the script calls, as Claude Code names its file reader. */
export const READ_TOOL = 'Read';
/** The tool Codex runs shell commands with. */
export const EXEC_COMMAND_TOOL = 'exec_command';

/** A tool call a script makes: the tool's name and its arguments. */
export interface ScriptedToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

/** Codex running `cmd` in its working directory. */
export function execCommandCall(cmd: string): ScriptedToolCall {
  return { name: EXEC_COMMAND_TOOL, arguments: { cmd } };
}

/** The call a script makes first: its toolCall, else a Read of its readPath; undefined for a plain answer. */
export function scriptedCall(script: { readPath?: string; toolCall?: ScriptedToolCall }): ScriptedToolCall | undefined {
  if (script.toolCall !== undefined) return script.toolCall;
  return script.readPath === undefined ? undefined : { name: READ_TOOL, arguments: { file_path: script.readPath } };
}

/** The answer after a tool result: it quotes what the tool returned. */
export function quoteAnswer(toolResult: string): string {
  return `The file says: ${toolResult}`;
}

/** The fakes' token count of a request body: deterministic, never 0. */
export function scriptedTokenCount(bodyText: string): number {
  return Math.max(1, Math.ceil(bodyText.length / 4));
}

export const SCRIPTED_OUTPUT_TOKENS = 7;

export interface ScriptedFailure {
  status: number;
  /** Anthropic error type or OpenAI error type. */
  type: string;
  message: string;
  headers?: Record<string, string>;
}

export interface ScriptedOptions {
  /** Script a Read of this path before answering; default a plain answer. */
  readPath?: string;
  /** OpenAI and Responses: script this call before answering (it wins over readPath). */
  toolCall?: ScriptedToolCall;
  /** The key the caller must send; default SCRIPTED_UPSTREAM_KEY. */
  key?: string;
  /** Anthropic: open every answer to a request with thinking on with a signed thinking block. Responses: open every answer to a request that includes "reasoning.encrypted_content" with an encrypted reasoning item. */
  thinking?: boolean;
  /** Anthropic: the `anthropic-beta` values accepted; default every documented one. */
  betas?: readonly string[];
}

export interface ScriptedUpstream {
  /** e.g. http://127.0.0.1:40123/v1 */
  readonly baseUrl: string;
  /** Without /v1: what ANTHROPIC_BASE_URL takes. */
  readonly origin: string;
  readonly received: ReceivedRequest[];
  /** Why each refused request was refused. */
  readonly violations: string[];
  /** What each answered request got, in order: 'tool_use', 'text', 'count', 'failure', 'cut'. */
  readonly answered: string[];
  /** The tool results that came back, as text. */
  readonly toolResults: string[];
  /** Answered, in order, before the script resumes (an upstream error for the error tests). */
  readonly failures: ScriptedFailure[];
  /** What the next answers do: readPath and thinking may change between tests. */
  readonly script: {
    readPath?: string;
    toolCall?: ScriptedToolCall;
    thinking?: boolean;
    /** A stream's connection is cut after this many events (Anthropic, Responses) or chunks (OpenAI), once; a mid-stream failure. */
    cutStreamAfter?: number;
  };
  close(): Promise<void>;
}

type Json = Record<string, any>;

function scripted(fake: FakeUpstream, state: Omit<ScriptedUpstream, 'baseUrl' | 'origin' | 'received' | 'close' | 'script'>, script: ScriptedUpstream['script']): ScriptedUpstream {
  return { ...state, script, baseUrl: fake.baseUrl, origin: fake.baseUrl.slice(0, -'/v1'.length), received: fake.received, close: () => fake.close() };
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part: Json) => (typeof part?.['text'] === 'string' ? part['text'] : '')).join('');
  return '';
}

export async function startScriptedAnthropic(options: ScriptedOptions = {}): Promise<ScriptedUpstream> {
  const key = options.key ?? SCRIPTED_UPSTREAM_KEY;
  const state = { violations: [] as string[], answered: [] as string[], toolResults: [] as string[], failures: [] as ScriptedFailure[] };
  const script: ScriptedUpstream['script'] = {};
  if (options.readPath !== undefined) script.readPath = options.readPath;
  if (options.thinking !== undefined) script.thinking = options.thinking;
  const signatures = new Map<string, string>();
  const issuedTools = new Set<string>();
  const refuse = (res: ServerResponse, n: number, status: number, type: string, message: string): void => {
    state.violations.push(message);
    writeAnthropicError(res, status, type, message, `req_fake${n}`);
  };
  const fake = await startFakeUpstream((_req, res, received) => {
    const n = received.n;
    const url = new URL(received.url, 'http://fake.invalid');
    const count = url.pathname === '/v1/messages/count_tokens';
    if (received.method !== 'POST' || (url.pathname !== '/v1/messages' && !count)) return refuse(res, n, 404, 'not_found_error', `${received.method} ${received.url}: no such endpoint`);
    if (url.search !== '' && url.search !== '?beta=true') return refuse(res, n, 400, 'invalid_request_error', `unexpected query ${url.search}`);
    // Anthropic takes the key as x-api-key, and as a Bearer token (the SDK's own choice since 1.x).
    const apiKey = received.headers['x-api-key'];
    const bearer = received.headers['authorization'];
    if (apiKey !== undefined && bearer !== undefined) state.violations.push('the key sent twice: x-api-key and Authorization');
    if (apiKey !== key && bearer !== `Bearer ${key}`) return refuse(res, n, 401, 'authentication_error', 'invalid x-api-key');
    if (typeof received.headers['anthropic-version'] !== 'string') return refuse(res, n, 400, 'invalid_request_error', 'anthropic-version: header is required');
    if (!/^application\/json\b/.test(received.headers['content-type'] ?? '')) return refuse(res, n, 400, 'invalid_request_error', 'content-type must be application/json');
    const failure = state.failures.shift();
    if (failure !== undefined) {
      state.answered.push('failure');
      return writeAnthropicError(res, failure.status, failure.type, failure.message, `req_fake${n}`, failure.headers);
    }
    const body = parse(received.text) as Json | undefined;
    const checks: Parameters<typeof messagesRequestViolation>[1] = { headers: received.headers, countTokens: count, signatureValid: (thinking, signature) => signatures.get(signature) === thinking };
    if (options.betas !== undefined) checks.betas = options.betas;
    const violation = messagesRequestViolation(body, checks);
    if (violation !== undefined) return refuse(res, n, 400, 'invalid_request_error', violation);
    const inputTokens = scriptedTokenCount(received.text);
    if (count) {
      state.answered.push('count');
      const text = JSON.stringify({ input_tokens: inputTokens });
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': `req_fake${n}` });
      res.end(text);
      return;
    }
    const messages = (body as Json)['messages'] as Json[];
    const results = messages.flatMap((m) => (Array.isArray(m['content']) ? (m['content'] as Json[]).filter((b) => b?.['type'] === 'tool_result') : []));
    const content: AnswerBlock[] = [];
    const thinkingOn = ['enabled', 'adaptive'].includes((body as Json)['thinking']?.['type']);
    if (script.thinking === true && thinkingOn) {
      const signature = `sig_fake${n}_${Buffer.from(THINKING_TEXT).toString('base64url')}`;
      signatures.set(signature, THINKING_TEXT);
      content.push({ type: 'thinking', thinking: THINKING_TEXT, signature });
    }
    let stop: 'end_turn' | 'tool_use' = 'end_turn';
    const offered = ((body as Json)['tools'] as Json[] | undefined)?.some((tool) => tool['name'] === READ_TOOL) === true;
    if (results.length > 0) {
      const last = results.at(-1) as Json;
      if (!issuedTools.has(last['tool_use_id'])) state.violations.push(`a tool_result for ${String(last['tool_use_id'])}, a tool_use this upstream never sent`);
      const text = resultText(last['content']);
      state.toolResults.push(text);
      content.push({ type: 'text', text: quoteAnswer(text) });
    } else if (script.readPath !== undefined && offered) {
      const id = `toolu_fake${n}`;
      issuedTools.add(id);
      content.push({ type: 'tool_use', id, name: READ_TOOL, input: { file_path: script.readPath } });
      stop = 'tool_use';
    } else {
      if (script.readPath !== undefined) state.violations.push(`request ${n}: the ${READ_TOOL} tool was not offered`);
      content.push({ type: 'text', text: PLAIN_ANSWER });
    }
    state.answered.push(stop === 'tool_use' ? 'tool_use' : 'text');
    const answer = { id: `msg_fake${n}`, model: String((body as Json)['model']), content, stop_reason: stop, usage: { input_tokens: inputTokens, output_tokens: SCRIPTED_OUTPUT_TOKENS } };
    const cut = script.cutStreamAfter;
    if (cut !== undefined && (body as Json)['stream'] === true) {
      delete script.cutStreamAfter;
      state.answered.splice(-1, 1, 'cut');
      res.writeHead(200, { 'content-type': 'text/event-stream', 'request-id': `req_fake${n}` });
      res.write(anthropicEvents(answer).slice(0, cut).map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join(''), () => res.destroy());
      return;
    }
    writeAnthropicAnswer(res, answer, (body as Json)['stream'] === true, `req_fake${n}`);
  });
  return scripted(fake, state, script);
}

function openAIError(res: ServerResponse, status: number, type: string, message: string, code: string | null, headers: Record<string, string> = {}): void {
  const text = JSON.stringify({ error: { message, type, param: null, code } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

/** Splits `text` in `count` pieces or fewer, none empty unless `text` is. */
function split(text: string, count: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / count));
  const out: string[] = [];
  for (let at = 0; at < text.length; at += size) out.push(text.slice(at, at + size));
  return out.length === 0 ? [''] : out;
}

export async function startScriptedOpenAI(options: ScriptedOptions = {}): Promise<ScriptedUpstream> {
  const key = options.key ?? SCRIPTED_UPSTREAM_KEY;
  const state = { violations: [] as string[], answered: [] as string[], toolResults: [] as string[], failures: [] as ScriptedFailure[] };
  const script: ScriptedUpstream['script'] = {};
  if (options.readPath !== undefined) script.readPath = options.readPath;
  if (options.toolCall !== undefined) script.toolCall = options.toolCall;
  if (options.thinking !== undefined) script.thinking = options.thinking;
  const issuedCalls = new Set<string>();
  const fake = await startFakeUpstream((_req, res, received) => {
    const n = received.n;
    if (received.method !== 'POST' || received.url !== '/v1/chat/completions') {
      state.violations.push(`${received.method} ${received.url}: no such endpoint`);
      return openAIError(res, 404, 'invalid_request_error', `Unknown request URL: ${received.method} ${received.url}.`, 'unknown_url');
    }
    if (received.headers['authorization'] !== `Bearer ${key}`) {
      state.violations.push('a missing or wrong Bearer key');
      return openAIError(res, 401, 'invalid_request_error', 'Incorrect API key provided.', 'invalid_api_key');
    }
    const failure = state.failures.shift();
    if (failure !== undefined) {
      state.answered.push('failure');
      return openAIError(res, failure.status, failure.type, failure.message, null, failure.headers);
    }
    const body = parse(received.text) as Json | undefined;
    const violation = chatRequestViolation(body);
    if (violation !== undefined) {
      state.violations.push(violation);
      return openAIError(res, 400, 'invalid_request_error', violation, null);
    }
    const request = body as Json;
    const messages = request['messages'] as Json[];
    const results = messages.filter((m) => m['role'] === 'tool');
    const scriptedTool = scriptedCall(script);
    const offered = scriptedTool !== undefined && (request['tools'] as Json[] | undefined)?.some((tool) => tool['function']?.['name'] === scriptedTool.name) === true;
    let text: string | undefined;
    let call: { id: string; name: string; arguments: string } | undefined;
    if (results.length > 0) {
      const last = results.at(-1) as Json;
      if (!issuedCalls.has(last['tool_call_id'])) state.violations.push(`a tool message for ${String(last['tool_call_id'])}, a call this upstream never made`);
      const read = resultText(last['content']);
      state.toolResults.push(read);
      text = quoteAnswer(read);
    } else if (scriptedTool !== undefined && offered) {
      call = { id: `call_fake${n}`, name: scriptedTool.name, arguments: JSON.stringify(scriptedTool.arguments) };
      issuedCalls.add(call.id);
    } else {
      if (scriptedTool !== undefined) state.violations.push(`request ${n}: the ${scriptedTool.name} tool was not offered`);
      text = PLAIN_ANSWER;
    }
    state.answered.push(call === undefined ? 'text' : 'tool_use');
    const usage = { prompt_tokens: scriptedTokenCount(received.text), completion_tokens: SCRIPTED_OUTPUT_TOKENS, total_tokens: scriptedTokenCount(received.text) + SCRIPTED_OUTPUT_TOKENS };
    const finish = call === undefined ? 'stop' : 'tool_calls';
    const base = { id: `chatcmpl-fake${n}`, created: 1_700_000_000 + n, model: String(request['model']) };
    if (request['stream'] !== true) {
      const message = call === undefined ? { role: 'assistant', content: text, refusal: null } : { role: 'assistant', content: null, refusal: null, tool_calls: [{ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }] };
      const json = JSON.stringify({ ...base, object: 'chat.completion', choices: [{ index: 0, message, logprobs: null, finish_reason: finish }], usage });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(json)) });
      res.end(json);
      return;
    }
    const chunk = (delta: Json, finishReason: string | null = null): string => `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] })}\n\n`;
    const out: string[] = [];
    if (call === undefined) {
      out.push(chunk({ role: 'assistant', content: '' }));
      for (const piece of split(text as string, 2)) out.push(chunk({ content: piece }));
    } else {
      out.push(chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
      for (const piece of split(call.arguments, 3)) out.push(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }));
    }
    out.push(chunk({}, finish));
    if (request['stream_options']?.['include_usage'] === true) out.push(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [], usage })}\n\n`);
    out.push('data: [DONE]\n\n');
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const cut = script.cutStreamAfter;
    if (cut !== undefined) {
      delete script.cutStreamAfter;
      state.answered.splice(-1, 1, 'cut');
      res.write(out.slice(0, cut).join(''), () => res.destroy());
      return;
    }
    res.end(out.join(''));
  });
  return scripted(fake, state, script);
}
