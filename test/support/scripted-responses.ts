// A strict fake OpenAI Responses upstream that scripts an agent's tool round
// trip, the Responses sibling of ./scripted-upstreams.ts: POST /v1/responses
// (streamed or not) with a Bearer key, every request held to
// ./openai-responses-constraints.ts. Asked with a `toolCall` (Codex's
// exec_command: execCommandCall) or a `readPath`, the first answer is that
// function call; once its function_call_output comes back the answer quotes
// it (quoteAnswer); otherwise every answer is PLAIN_ANSWER. With `thinking`,
// a request that includes "reasoning.encrypted_content" gets an encrypted
// reasoning item first, and one that comes back altered is refused as OpenAI
// refuses it. With `websocketRefusal`, a WebSocket upgrade (which Codex tries
// first when its provider sets supports_websockets) is answered with that
// status and OpenAI's error body, and kept in `upgrades`. A request that
// breaks a constraint is answered 400 in OpenAI's shape and its reason kept
// in `violations`, for the test to assert empty.
import http, { type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { startTestUpstream } from '../../src/testing/fake-upstream-server.ts';
import type { ReceivedRequest } from '../../src/testing/fake-upstream.ts';
import { responsesRequestViolation } from './openai-responses-constraints.ts';
import { responsesEvents, writeResponsesAnswer, writeResponsesError, type ResponsesAnswer, type ResponsesAnswerItem } from './responses-answers.ts';
import {
  PLAIN_ANSWER,
  quoteAnswer,
  SCRIPTED_OUTPUT_TOKENS,
  SCRIPTED_UPSTREAM_KEY,
  scriptedCall,
  scriptedTokenCount,
  type ScriptedFailure,
  type ScriptedOptions,
  type ScriptedUpstream,
} from './scripted-upstreams.ts';

type Json = Record<string, any>;

/** The encrypted content the fake issues for reasoning item `id`: opaque to clients, checkable by the fake. */
export function encryptedReasoning(id: string): string {
  return `enc_fake_${Buffer.from(id).toString('base64url')}`;
}

/** What a function_call_output carries, as text. */
function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return output.map((part: Json) => (typeof part?.['text'] === 'string' ? part['text'] : '')).join('');
  return '';
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export interface ScriptedResponsesOptions extends ScriptedOptions {
  /** Answer a WebSocket upgrade with this HTTP status; default no answer of the fake's own (Node's). */
  websocketRefusal?: number;
}

/** Its `answered` also holds `websocket <status>` for each upgrade refused. */
export interface ScriptedResponsesUpstream extends ScriptedUpstream {
  /** The WebSocket upgrade requests refused, in order (`text` empty). */
  readonly upgrades: ReceivedRequest[];
}

export async function startScriptedResponses(options: ScriptedResponsesOptions = {}): Promise<ScriptedResponsesUpstream> {
  const key = options.key ?? SCRIPTED_UPSTREAM_KEY;
  const violations: string[] = [];
  const answered: string[] = [];
  const toolResults: string[] = [];
  const failures: ScriptedFailure[] = [];
  const script: ScriptedUpstream['script'] = {};
  if (options.readPath !== undefined) script.readPath = options.readPath;
  if (options.toolCall !== undefined) script.toolCall = options.toolCall;
  if (options.thinking !== undefined) script.thinking = options.thinking;
  const issuedCalls = new Set<string>();
  const issuedReasoning = new Set<string>();
  const refuse = (res: ServerResponse, status: number, message: string, code: string | null = null): void => {
    violations.push(message);
    writeResponsesError(res, status, { message, type: 'invalid_request_error', param: null, code });
  };
  const upgrades: ReceivedRequest[] = [];
  const refusal = options.websocketRefusal;
  const upgrade =
    refusal === undefined
      ? undefined
      : (req: http.IncomingMessage, socket: Duplex): void => {
          upgrades.push({ n: upgrades.length + 1, method: req.method ?? '', url: req.url ?? '', headers: req.headers, text: '' });
          answered.push(`websocket ${refusal}`);
          const text = JSON.stringify({ error: { message: 'WebSocket is not served here; use HTTP.', type: 'invalid_request_error', param: null, code: null } });
          socket.end(`HTTP/1.1 ${refusal} ${http.STATUS_CODES[refusal] ?? 'Refused'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`);
        };
  const fake = await startTestUpstream((_req, res, received) => {
    const n = received.n;
    if (received.method !== 'POST' || received.url !== '/v1/responses') return refuse(res, 404, `Unknown request URL: ${received.method} ${received.url}.`, 'unknown_url');
    if (received.headers['authorization'] !== `Bearer ${key}`) return refuse(res, 401, 'Incorrect API key provided.', 'invalid_api_key');
    if (!/^application\/json\b/.test(received.headers['content-type'] ?? '')) return refuse(res, 400, 'content-type must be application/json');
    const failure = failures.shift();
    if (failure !== undefined) {
      answered.push('failure');
      res.writeHead(failure.status, { 'content-type': 'application/json', ...failure.headers });
      res.end(JSON.stringify({ error: { message: failure.message, type: failure.type, param: null, code: null } }));
      return;
    }
    const body = parse(received.text) as Json | undefined;
    const violation = responsesRequestViolation(body, { reasoningValid: (id, encrypted) => issuedReasoning.has(id) && encrypted === encryptedReasoning(id) });
    if (violation !== undefined) return refuse(res, 400, violation);
    const request = body as Json;
    const input = Array.isArray(request['input']) ? (request['input'] as Json[]) : [];
    const outputs = input.filter((item) => item['type'] === 'function_call_output');
    const planned = scriptedCall(script);
    const offered = planned !== undefined && (request['tools'] as Json[] | undefined)?.some((tool) => tool['type'] === 'function' && tool['name'] === planned.name) === true;
    const output: ResponsesAnswerItem[] = [];
    if (script.thinking === true && (request['include'] as unknown[] | undefined)?.includes('reasoning.encrypted_content') === true) {
      const id = `rs_fake${n}`;
      issuedReasoning.add(id);
      output.push({ type: 'reasoning', id, encrypted_content: encryptedReasoning(id) });
    }
    if (outputs.length > 0) {
      const last = outputs.at(-1) as Json;
      if (!issuedCalls.has(last['call_id'])) violations.push(`a function_call_output for ${String(last['call_id'])}, a call this upstream never made`);
      const text = outputText(last['output']);
      toolResults.push(text);
      output.push({ type: 'message', id: `msg_fake${n}`, text: quoteAnswer(text) });
    } else if (planned !== undefined && offered) {
      const callId = `call_fake${n}`;
      issuedCalls.add(callId);
      output.push({ type: 'function_call', id: `fc_fake${n}`, call_id: callId, name: planned.name, arguments: JSON.stringify(planned.arguments) });
    } else {
      if (planned !== undefined) violations.push(`request ${n}: the ${planned.name} tool was not offered`);
      output.push({ type: 'message', id: `msg_fake${n}`, text: PLAIN_ANSWER });
    }
    answered.push(output.some((item) => item.type === 'function_call') ? 'tool_use' : 'text');
    const answer: ResponsesAnswer = { id: `resp_fake${n}`, model: String(request['model']), created_at: 1_700_000_000 + n, output, usage: { input_tokens: scriptedTokenCount(received.text), output_tokens: SCRIPTED_OUTPUT_TOKENS } };
    const cut = script.cutStreamAfter;
    if (cut !== undefined && request['stream'] === true) {
      delete script.cutStreamAfter;
      answered.splice(-1, 1, 'cut');
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'x-request-id': `req_fake${n}` });
      res.write(responsesEvents(answer).slice(0, cut).map((event) => `event: ${String(event['type'])}\ndata: ${JSON.stringify(event)}\n\n`).join(''), () => res.destroy());
      return;
    }
    writeResponsesAnswer(res, answer, request['stream'] === true, `req_fake${n}`);
  }, upgrade === undefined ? {} : { upgrade });
  return {
    baseUrl: fake.baseUrl,
    origin: fake.baseUrl.slice(0, -'/v1'.length),
    received: fake.received,
    violations,
    answered,
    toolResults,
    failures,
    script,
    upgrades,
    close: () => fake.close(),
  };
}
