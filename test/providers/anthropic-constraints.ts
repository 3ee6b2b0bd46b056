// Anthropic's documented request constraints for POST /v1/messages, as the
// fake Anthropic upstreams of the tests hold every request they receive to:
// a request that breaks one is answered 400 with Anthropic's error shape and
// (where it is public) Anthropic's own wording, so a translation the real API
// would refuse fails the test that sent it.
//
// Sources: the Messages API reference (https://docs.anthropic.com/en/api/messages:
// max_tokens >= 1, temperature and top_p 0 to 1, "either alter temperature or
// top_p, but not both", system as a string or text blocks, image sources, the
// tool name pattern), the migration guide to Claude 4.5 ("Use only temperature
// OR top_p, not both"), and the error messages the API answers, as quoted in
// public issues: "text content blocks must be non-empty", "text content blocks
// must contain non-whitespace text", "each stop sequence must contain
// non-whitespace", "final assistant content cannot end with trailing
// whitespace", "tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
// "tool_use ids were found without tool_result blocks immediately after",
// "unexpected tool_use_id found in tool_result blocks", "tool_use ids must be
// unique", "Did not find N tool_result block(s) at the beginning of this message".
//
// Structured outputs (output_config.format): ./anthropic-output-constraints.ts.
// metadata.user_id: at most 512 characters (the API reference).
// disable_parallel_tool_use: on auto, any and tool choices only.
//
// Consecutive turns of one role are combined before the pairing rules apply,
// as Anthropic documents. A first assistant turn is allowed (Anthropic's own
// API takes it); a final assistant turn is a prefill and is allowed too, so
// the gateway's stricter rule (no prefill) is checked by its own tests.
import type { ServerResponse } from 'node:http';
import { checkKeys, checkOutputConfig, fail, isObject, Violation, type Json } from './anthropic-output-constraints.ts';

const TOOL_ID = /^[a-zA-Z0-9_-]+$/;
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/** Whitespace as JavaScript's trim(), Python's isspace() and Unicode White_Space see it. */
const BLANK = /^[\s\u001c-\u001f\u0085]*$/;
const TRAILING_SPACE = /[\s\u001c-\u001f\u0085]$/;
const IMAGE_MEDIA_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];
const REQUEST_FIELDS = new Set(['model', 'max_tokens', 'messages', 'system', 'tools', 'tool_choice', 'stop_sequences', 'temperature', 'top_p', 'top_k', 'stream', 'metadata', 'output_config']);
const MAX_USER_ID = 512;
/** Anthropic: "There is a limit of 100,000 messages in a single request." */
const MAX_MESSAGES = 100_000;


function checkText(text: unknown, where: string): void {
  if (typeof text !== 'string') fail(`${where}.text: Input should be a valid string`);
  if (text === '') fail('messages: text content blocks must be non-empty');
  if (BLANK.test(text)) fail('messages: text content blocks must contain non-whitespace text');
}

function checkImage(block: Json, where: string): void {
  checkKeys(block, ['type', 'source', 'cache_control'], where);
  const source = block['source'];
  if (!isObject(source)) fail(`${where}.source: Field required`);
  if (source['type'] === 'url') {
    checkKeys(source, ['type', 'url'], `${where}.source`);
    if (typeof source['url'] !== 'string' || !/^https?:\/\//.test(source['url'])) fail(`${where}.source.url: Input should be a valid URL`);
  } else if (source['type'] === 'base64') {
    checkKeys(source, ['type', 'media_type', 'data'], `${where}.source`);
    if (!IMAGE_MEDIA_TYPES.includes(source['media_type'] as string)) fail(`${where}.source.media_type: Input should be ${IMAGE_MEDIA_TYPES.join(', ')}`);
    if (typeof source['data'] !== 'string' || source['data'] === '') fail(`${where}.source.data: Field required`);
  } else {
    fail(`${where}.source.type: Input tag does not match any of the expected tags: 'base64', 'url'`);
  }
}

function checkToolResultContent(content: unknown, where: string): void {
  if (content === undefined) return;
  if (typeof content === 'string') {
    if (content === '') fail('messages: text content blocks must be non-empty');
    if (BLANK.test(content)) fail('messages: text content blocks must contain non-whitespace text');
    return;
  }
  if (!Array.isArray(content)) fail(`${where}.content: Input should be a valid string or list`);
  for (let k = 0; k < content.length; k++) {
    const inner = content[k];
    const at = `${where}.content.${k}`;
    if (!isObject(inner)) fail(`${at}: Input should be a valid dictionary`);
    if (inner['type'] === 'text') {
      checkKeys(inner, ['type', 'text', 'cache_control'], at);
      checkText(inner['text'], at);
    } else if (inner['type'] === 'image') checkImage(inner, at);
    else fail(`${at}.type: Input tag does not match any of the expected tags: 'text', 'image'`);
  }
}

interface Turn {
  role: 'user' | 'assistant';
  /** [message index, content index, block] */
  blocks: [number, number, Json][];
}

function checkMessage(message: unknown, index: number): Turn {
  const where = `messages.${index}`;
  if (!isObject(message)) fail(`${where}: Input should be a valid dictionary`);
  checkKeys(message, ['role', 'content'], where);
  const role = message['role'];
  if (role !== 'user' && role !== 'assistant') fail(`${where}.role: Input should be 'user' or 'assistant'`);
  const content = message['content'];
  const blocks: [number, number, Json][] = [];
  if (typeof content === 'string') {
    checkText(content, where);
    blocks.push([index, 0, { type: 'text', text: content }]);
    return { role, blocks };
  }
  if (!Array.isArray(content)) fail(`${where}.content: Input should be a valid list`);
  if (content.length === 0) fail(`${where}: all messages must have non-empty content except for the optional final assistant message`);
  for (let k = 0; k < content.length; k++) {
    const block = content[k];
    const at = `${where}.content.${k}`;
    if (!isObject(block)) fail(`${at}: Input should be a valid dictionary`);
    switch (block['type']) {
      case 'text':
        checkKeys(block, ['type', 'text', 'cache_control', 'citations'], at);
        checkText(block['text'], at);
        break;
      case 'image':
        if (role !== 'user') fail(`${at}: image blocks are only allowed in user messages`);
        checkImage(block, at);
        break;
      case 'tool_use':
        if (role !== 'assistant') fail(`${at}: tool_use blocks are only allowed in assistant messages`);
        checkKeys(block, ['type', 'id', 'name', 'input', 'cache_control'], at);
        if (typeof block['id'] !== 'string' || !TOOL_ID.test(block['id'])) fail(`${at}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`);
        if (typeof block['name'] !== 'string' || block['name'] === '' || block['name'].length > 200) fail(`${at}.tool_use.name: String should have 1 to 200 characters`);
        if (!isObject(block['input'])) fail(`${at}.tool_use.input: Input should be a valid dictionary`);
        break;
      case 'tool_result':
        if (role !== 'user') fail(`${at}: tool_result blocks are only allowed in user messages`);
        checkKeys(block, ['type', 'tool_use_id', 'content', 'is_error', 'cache_control'], at);
        if (typeof block['tool_use_id'] !== 'string' || !TOOL_ID.test(block['tool_use_id'])) {
          fail(`${at}.tool_result.tool_use_id: String should match pattern '^[a-zA-Z0-9_-]+$'`);
        }
        if (block['is_error'] !== undefined && typeof block['is_error'] !== 'boolean') fail(`${at}.is_error: Input should be a valid boolean`);
        checkToolResultContent(block['content'], at);
        break;
      default:
        fail(`${at}.type: Input tag '${String(block['type'])}' does not match any of the expected tags`);
    }
    blocks.push([index, k, block]);
  }
  return { role, blocks };
}

/** Anthropic combines consecutive turns of one role, then pairs tool calls and results. */
function checkTurns(turns: Turn[]): void {
  const merged: Turn[] = [];
  for (const turn of turns) {
    const last = merged[merged.length - 1];
    if (last !== undefined && last.role === turn.role) last.blocks.push(...turn.blocks);
    else merged.push({ role: turn.role, blocks: [...turn.blocks] });
  }
  const seen = new Set<string>();
  for (let t = 0; t < merged.length; t++) {
    const turn = merged[t] as Turn;
    if (turn.role === 'assistant') {
      const ids: string[] = [];
      for (const [m, k, block] of turn.blocks) {
        if (block['type'] !== 'tool_use') continue;
        const id = block['id'] as string;
        if (seen.has(id)) fail(`messages.${m}.content.${k}: \`tool_use\` ids must be unique`);
        seen.add(id);
        ids.push(id);
      }
      if (ids.length === 0) continue;
      const next = merged[t + 1];
      const first = turn.blocks[0] as [number, number, Json];
      const answered = new Set<string>();
      for (const [, , block] of next?.blocks ?? []) if (block['type'] === 'tool_result') answered.add(block['tool_use_id'] as string);
      const missing = ids.filter((id) => !answered.has(id));
      if (next === undefined || missing.length > 0) {
        fail(
          `messages.${first[0]}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${(missing.length > 0 ? missing : ids).join(', ')}. ` +
            'Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
        );
      }
    } else {
      const previous = merged[t - 1];
      const calls = new Set<string>();
      for (const [, , block] of previous?.blocks ?? []) if (block['type'] === 'tool_use') calls.add(block['id'] as string);
      let sawOther = false;
      const answered = new Set<string>();
      for (const [m, k, block] of turn.blocks) {
        if (block['type'] !== 'tool_result') {
          sawOther = true;
          continue;
        }
        const id = block['tool_use_id'] as string;
        if (!calls.has(id) || answered.has(id)) {
          fail(
            `messages.${m}.content.${k}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. ` +
              'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
          );
        }
        answered.add(id);
        if (sawOther) {
          fail(`messages.${m}: Did not find ${calls.size} \`tool_result\` block(s) at the beginning of this message. Messages following \`tool_use\` blocks must begin with a matching number of \`tool_result\` blocks.`);
        }
      }
    }
  }
  const last = merged[merged.length - 1];
  if (last?.role === 'assistant') {
    const final = last.blocks[last.blocks.length - 1]?.[2];
    if (final?.['type'] === 'text' && TRAILING_SPACE.test(final['text'] as string)) fail('messages: final assistant content cannot end with trailing whitespace');
  }
}

function checkSystem(system: unknown): void {
  if (system === undefined || typeof system === 'string') return;
  if (!Array.isArray(system)) fail('system: Input should be a valid string or list');
  for (let k = 0; k < system.length; k++) {
    const block = system[k];
    if (!isObject(block) || block['type'] !== 'text') fail(`system.${k}.type: Input should be 'text'`);
    checkKeys(block, ['type', 'text', 'cache_control', 'citations'], `system.${k}`);
    if (typeof block['text'] !== 'string' || block['text'] === '') fail('system: text content blocks must be non-empty');
    if (BLANK.test(block['text'])) fail('system: text content blocks must contain non-whitespace text');
  }
}

function checkTools(tools: unknown, toolChoice: unknown): void {
  const names = new Set<string>();
  if (tools !== undefined) {
    if (!Array.isArray(tools)) fail('tools: Input should be a valid list');
    for (let k = 0; k < tools.length; k++) {
      const tool = tools[k];
      const at = `tools.${k}`;
      if (!isObject(tool)) fail(`${at}: Input should be a valid dictionary`);
      checkKeys(tool, ['name', 'description', 'input_schema', 'cache_control', 'type'], at);
      if (typeof tool['name'] !== 'string' || !TOOL_NAME.test(tool['name'])) fail(`${at}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`);
      if (names.has(tool['name'])) fail('tools: Tool names must be unique.');
      names.add(tool['name']);
      if (tool['description'] !== undefined && typeof tool['description'] !== 'string') fail(`${at}.custom.description: Input should be a valid string`);
      const schema = tool['input_schema'];
      if (!isObject(schema)) fail(`${at}.custom.input_schema: Field required`);
      if (schema['type'] !== 'object') fail(`${at}.custom.input_schema.type: Input should be 'object'`);
    }
  }
  if (toolChoice === undefined) return;
  if (!isObject(toolChoice)) fail('tool_choice: Input should be a valid dictionary');
  const type = toolChoice['type'];
  if (type === 'none') checkKeys(toolChoice, ['type'], 'tool_choice.none');
  else checkKeys(toolChoice, ['type', 'name', 'disable_parallel_tool_use'], `tool_choice.${String(type)}`);
  const disable = toolChoice['disable_parallel_tool_use'];
  if (disable !== undefined && typeof disable !== 'boolean') fail(`tool_choice.${String(type)}.disable_parallel_tool_use: Input should be a valid boolean`);
  if (type === 'tool') {
    if (typeof toolChoice['name'] !== 'string' || !names.has(toolChoice['name'])) fail(`tool_choice.name: Tool '${String(toolChoice['name'])}' not found in tools`);
  } else if (type !== 'auto' && type !== 'any' && type !== 'none') {
    fail("tool_choice.type: Input tag does not match any of the expected tags: 'auto', 'any', 'tool', 'none'");
  }
}

function checkSampling(body: Json): void {
  for (const key of ['temperature', 'top_p'] as const) {
    const value = body[key];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !(value >= 0 && value <= 1)) fail(`${key}: Input should be less than or equal to 1`);
  }
  if (body['temperature'] !== undefined && body['top_p'] !== undefined) fail('`temperature` and `top_p` cannot both be specified for this model. Please use only one.');
}

function checkStops(stops: unknown): void {
  if (stops === undefined) return;
  if (!Array.isArray(stops)) fail('stop_sequences: Input should be a valid list');
  for (const stop of stops) {
    if (typeof stop !== 'string') fail('stop_sequences: Input should be a valid string');
    if (stop === '') fail('stop_sequences: each stop sequence must be non-empty');
    if (BLANK.test(stop)) fail('stop_sequences: each stop sequence must contain non-whitespace');
  }
}

function checkMetadata(metadata: unknown): void {
  if (metadata === undefined) return;
  if (!isObject(metadata)) fail('metadata: Input should be a valid dictionary');
  checkKeys(metadata, ['user_id'], 'metadata');
  const id = metadata['user_id'];
  if (id === undefined || id === null) return;
  if (typeof id !== 'string') fail('metadata.user_id: Input should be a valid string');
  if ([...id].length > MAX_USER_ID) fail(`metadata.user_id: String should have at most ${MAX_USER_ID} characters`);
}

/** The first constraint `body` breaks, in Anthropic's words where they are public; undefined when it keeps them all. */
export function anthropicRequestViolation(body: unknown): string | undefined {
  try {
    if (!isObject(body)) fail('body: Input should be a valid dictionary');
    for (const key of Object.keys(body)) if (!REQUEST_FIELDS.has(key)) fail(`${key}: Extra inputs are not permitted`);
    if (typeof body['model'] !== 'string' || body['model'] === '') fail('model: Field required');
    const maxTokens = body['max_tokens'];
    if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens)) fail('max_tokens: Field required');
    if (maxTokens < 1) fail('max_tokens: Input should be greater than or equal to 1');
    const messages = body['messages'];
    if (!Array.isArray(messages)) fail('messages: Field required');
    if (messages.length === 0) fail('messages: at least one message is required');
    if (messages.length > MAX_MESSAGES) fail(`messages: at most ${MAX_MESSAGES} messages`);
    checkTurns(messages.map((message, index) => checkMessage(message, index)));
    checkSystem(body['system']);
    checkTools(body['tools'], body['tool_choice']);
    checkSampling(body);
    checkStops(body['stop_sequences']);
    checkMetadata(body['metadata']);
    checkOutputConfig(body['output_config']);
    if (body['stream'] !== undefined && typeof body['stream'] !== 'boolean') fail('stream: Input should be a valid boolean');
    return undefined;
  } catch (error) {
    if (error instanceof Violation) return error.message;
    throw error;
  }
}

/** Anthropic's error body for an invalid request. */
export function anthropicInvalidRequest(message: string): { type: 'error'; error: { type: 'invalid_request_error'; message: string } } {
  return { type: 'error', error: { type: 'invalid_request_error', message } };
}

/**
 * For a fake upstream: answers 400 as Anthropic does and returns true when
 * `body` (the parsed request, or its text) breaks a constraint. Every fake
 * Anthropic upstream of the suite calls this first.
 */
export function refuseLikeAnthropic(res: ServerResponse, body: unknown): boolean {
  let parsed = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body);
    } catch {
      parsed = undefined;
    }
  }
  const violation = anthropicRequestViolation(parsed);
  if (violation === undefined) return false;
  const text = JSON.stringify(anthropicInvalidRequest(violation));
  res.writeHead(400, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
  return true;
}
