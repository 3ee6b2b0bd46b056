// A validated Messages request -> the gateway's chat request. Pure.
//
// The translation is always made: routing, limits and the reservation read it
// even when only an Anthropic upstream can take the request (that upstream
// receives the client's own body). `untranslatable` is the first thing an
// upstream speaking OpenAI's chat completions cannot express, as the 400 it
// answers with, naming the path; null when the translation says everything.
// The table, with the reason for each choice: docs/messages-translation.md.
//
// Choices the table explains:
// - tool_result blocks become tool messages placed before the rest of their
//   user message (OpenAI needs them right after the assistant's tool_calls;
//   Anthropic puts them first in the message). Their text blocks are joined
//   with "\n"; `is_error: true` prefixes the text with "Error: ", since a
//   tool message has no error flag. Its images (Claude Code's Read of a PNG)
//   follow as image_url parts of a user message right after the tool
//   messages, as a tool message carries text only.
// - tools with defer_loading are left out: Anthropic shows them to the model
//   only once tool search loads them, which an OpenAI upstream cannot do (a
//   tool_reference block, which loads one, is untranslatable).
// - a final assistant message (a prefill: the answer continues it) is
//   untranslatable; an empty one is left out.
// - every system text (the top-level `system`, then each "role": "system"
//   message in order) goes into ONE leading system message: the chat
//   templates of many open models (Qwen, Llama, Gemma) refuse a system
//   message anywhere but first, and a late system message keeps its authority
//   and loses only its position (as the gateway's chat -> Anthropic
//   translation does the other way).
// - a system message with clear_at "next_user_message" is left out once a
//   later user message exists, as Anthropic no longer shows it then.
// - the translation carries its prompt bound (../chat/request-prompt-bound.ts)
//   with what it leaves out added (thinking blocks, documents, server tools,
//   deferred tools, ... by the bytes of their JSON; images by count), and what
//   an Anthropic upstream reads on the request's behalf (documents by URL or
//   file id, server tools' results: ./upstream-reads.ts), so a request reserved
//   from it is never under-reserved for an Anthropic upstream.
// - dropped (no equivalent, the answer means the same): thinking,
//   output_config.effort, context_management, compaction, cache_control,
//   metadata.user_id, service_tier, speed, diagnostics, fallbacks,
//   billing_policy, fallback_credit_token, citations, eager_input_streaming.
import { Buffer } from 'node:buffer';
import { carryPromptBound, measurePrompt } from '../chat/request-prompt-bound.ts';
import type { ChatMessage, ChatRequest, ContentPart, ResponseFormat, TextPart, ToolCall, ToolChoice, ToolDefinition } from '../chat/types.ts';
import { InvalidRequestError } from '../errors/api-error.ts';
import { renderJsonPath } from '../json/parser.ts';
import { isServerToolType } from './message-request-tools.ts';
import type { MessagesRequest } from './message-request-types.ts';
import { blockReadTokens, serverToolReadTokens } from './upstream-reads.ts';

export interface ChatTranslation {
  request: ChatRequest;
  untranslatable: InvalidRequestError | null;
}

/** OpenAI's limits the Messages API does not share. */
const OPENAI_MAX_STOP = 4;
const OPENAI_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Top-level fields with a translation, or dropped on purpose; any other is untranslatable. */
const TRANSLATED = new Set(['model', 'messages', 'max_tokens', 'system', 'stop_sequences', 'stream', 'temperature', 'top_p', 'tools', 'tool_choice', 'output_config', 'output_format']);
const DROPPED = new Set(['thinking', 'context_management', 'compaction', 'cache_control', 'metadata', 'service_tier', 'speed', 'diagnostics', 'fallbacks', 'billing_policy', 'fallback_credit_token']);

/** What the 400 calls each documented top-level field without a translation. */
const UNTRANSLATABLE_FIELDS: ReadonlyMap<string, string> = new Map([
  ['top_k', 'top_k'],
  ['mcp_servers', 'mcp_servers (MCP servers Anthropic connects to)'],
  ['container', 'a code-execution container'],
  ['inference_geo', 'inference_geo (where the answer may be computed)'],
  ['thread', 'a server-side thread'],
]);

type JsonObject = Record<string, unknown>;
type Path = ReadonlyArray<string | number>;

/**
 * The first untranslatable thing (the error is made once, for the first
 * only), and the size of what the translation leaves out: the request is
 * reserved from the translation even when an Anthropic upstream receives the
 * whole body, so the prompt bound must count that too.
 */
class Translation {
  first: InvalidRequestError | null = null;
  /** UTF-8 bytes of the JSON of everything left out (at least its tokens, as for text; see request-prompt-bound.ts). */
  leftOutTokens = 0;
  leftOutImages = 0;

  /** Counts a value left out by its JSON, and a block's reads beside it (a document by URL or file id). */
  leaveOut(value: unknown): void {
    this.leftOutTokens += Buffer.byteLength(JSON.stringify(value), 'utf8');
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) this.leftOutTokens += blockReadTokens(value as JsonObject);
  }

  refuse(path: Path, what: string): void {
    if (this.first !== null) return;
    const param = renderJsonPath(path);
    this.first = new InvalidRequestError(
      `'${param}': ${what} has no equivalent in OpenAI's chat completions, so no OpenAI-compatible upstream of this model can take the request; only an Anthropic upstream can. Remove it, or use a model served by an Anthropic provider.`,
      param,
      'unsupported_parameter',
    );
  }
}

/** "a thinking block", "an image block". */
function blockName(type: unknown): string {
  const name = String(type);
  return `${/^[aeiou]/.test(name) ? 'an' : 'a'} ${name} block`;
}

export function toChatRequest(req: MessagesRequest): ChatTranslation {
  const t = new Translation();
  const messages: ChatMessage[] = [];
  const system: TextPart[] = [];
  if (req.system !== undefined) systemParts(req.system as string | JsonObject[], ['system'], system, t);
  translateMessages(req, messages, system, t);
  if (system.length > 0) messages.unshift({ role: 'system', content: system.length === 1 ? (system[0] as TextPart).text : system });
  const request: ChatRequest = { model: req.model, messages, max_tokens: req.max_tokens };
  if (req.max_tokens === 0) t.refuse(['max_tokens'], 'max_tokens 0 (a prompt-cache warm-up without an answer)');

  for (const key of Object.keys(req)) {
    const value = req[key];
    if (value === undefined || TRANSLATED.has(key) || DROPPED.has(key)) continue;
    t.refuse([key], UNTRANSLATABLE_FIELDS.get(key) ?? `the field '${key}' (passed through for an Anthropic upstream)`);
    t.leaveOut(value);
  }
  if (req.stop_sequences !== undefined && req.stop_sequences.length > 0) {
    if (req.stop_sequences.length > OPENAI_MAX_STOP) t.refuse(['stop_sequences'], `more than ${OPENAI_MAX_STOP} stop sequences`);
    request.stop = req.stop_sequences.slice();
  }
  if (req.temperature !== undefined) request.temperature = req.temperature;
  if (req.top_p !== undefined) request.top_p = req.top_p;
  if (req.stream === true) {
    request.stream = true;
    request.stream_options = { include_usage: true };
  }
  if (req.tools !== undefined) {
    const tools = translateTools(req.tools as JsonObject[], t);
    if (tools.length > 0) request.tools = tools;
  }
  if (req.tool_choice !== undefined) translateToolChoice(req.tool_choice as JsonObject, request, t);
  const format = req.output_config?.format ?? (req['output_format'] as JsonObject | null | undefined);
  if (format !== undefined && format !== null) request.response_format = responseFormat(format as JsonObject);
  const measured = measurePrompt(request);
  carryPromptBound(request, { tokens: measured.tokens + t.leftOutTokens, imageParts: measured.imageParts + t.leftOutImages });
  return { request, untranslatable: t.first };
}

/** Anthropic's structured output (a JSON schema the answer follows) is OpenAI's strict json_schema. */
function responseFormat(format: JsonObject): ResponseFormat {
  return { type: 'json_schema', json_schema: { name: 'output', schema: format['schema'] as JsonObject, strict: true } };
}

/** Appends a system prompt's text to `parts`, in order (an empty string says nothing). */
function systemParts(system: string | JsonObject[], path: Path, parts: TextPart[], t: Translation): void {
  if (typeof system === 'string') {
    if (system.length > 0) parts.push({ type: 'text', text: system });
    return;
  }
  for (let i = 0; i < system.length; i++) {
    const block = system[i] as JsonObject;
    if (block['type'] === 'text') parts.push({ type: 'text', text: block['text'] as string });
    else {
      t.refuse([...path, i], blockName(block['type']));
      t.leaveOut(block);
    }
  }
}

function translateMessages(req: MessagesRequest, out: ChatMessage[], system: TextPart[], t: Translation): void {
  const messages = req.messages as unknown as JsonObject[];
  let lastUser = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if ((messages[i] as JsonObject)['role'] === 'user') {
      lastUser = i;
      break;
    }
  }
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i] as JsonObject;
    const content = message['content'] as string | JsonObject[] | undefined;
    switch (message['role']) {
      case 'system':
        if (content === undefined || (message['clear_at'] === 'next_user_message' && lastUser > i)) break;
        systemParts(content, ['messages', i, 'content'], system, t);
        break;
      case 'user':
        translateUser(content as string | JsonObject[], i, out, t);
        break;
      default:
        if (i === messages.length - 1 && isPrefill(content as string | JsonObject[], i, t)) break;
        out.push(translateAssistant(content as string | JsonObject[], i, t));
    }
  }
}

/**
 * A final assistant message is a prefill: Anthropic's answer continues its
 * text, where OpenAI's chat completions answers anew. An empty one says
 * nothing and is left out; any other is untranslatable.
 */
function isPrefill(content: string | JsonObject[], index: number, t: Translation): boolean {
  if (content.length > 0) t.refuse(['messages', index], 'a final assistant message (a prefill the answer continues)');
  return content.length === 0;
}

function imagePart(block: JsonObject, path: Path, t: Translation): ContentPart | null {
  const source = block['source'] as JsonObject;
  if (source['type'] === 'base64') return { type: 'image_url', image_url: { url: `data:${source['media_type'] as string};base64,${source['data'] as string}` } };
  if (source['type'] === 'url') return { type: 'image_url', image_url: { url: source['url'] as string } };
  t.refuse([...path, 'source'], `an image by ${String(source['type'])} reference`);
  t.leftOutImages++;
  return null;
}

function translateUser(content: string | JsonObject[], index: number, out: ChatMessage[], t: Translation): void {
  if (typeof content === 'string') {
    out.push({ role: 'user', content });
    return;
  }
  const parts: ContentPart[] = [];
  const toolImages: ContentPart[] = [];
  for (let j = 0; j < content.length; j++) {
    const block = content[j] as JsonObject;
    const path = ['messages', index, 'content', j];
    switch (block['type']) {
      case 'text':
        parts.push({ type: 'text', text: block['text'] as string });
        break;
      case 'image': {
        const part = imagePart(block, path, t);
        if (part !== null) parts.push(part);
        break;
      }
      case 'tool_result':
        out.push(toolMessage(block, path, toolImages, t));
        break;
      default:
        t.refuse(path, blockName(block['type']));
        t.leaveOut(block);
    }
  }
  if (toolImages.length > 0) parts.unshift(...toolImages);
  if (parts.length === 0) return;
  const only = parts[0] as ContentPart;
  out.push({ role: 'user', content: parts.length === 1 && only.type === 'text' ? only.text : parts });
}

/** A tool_result -> a tool message with its text; its images are appended to `images`. */
function toolMessage(block: JsonObject, path: Path, images: ContentPart[], t: Translation): ChatMessage {
  const content = block['content'] as string | JsonObject[] | undefined;
  let text = '';
  if (typeof content === 'string') text = content;
  else if (content !== undefined) {
    for (let k = 0; k < content.length; k++) {
      const inner = content[k] as JsonObject;
      if (inner['type'] === 'text') text = text === '' ? (inner['text'] as string) : `${text}\n${inner['text'] as string}`;
      else if (inner['type'] === 'image') {
        const part = imagePart(inner, [...path, 'content', k], t);
        if (part !== null) images.push(part);
      } else {
        t.refuse([...path, 'content', k], `${blockName(inner['type'])} in a tool_result`);
        t.leaveOut(inner);
      }
    }
  }
  if (block['is_error'] === true) text = `Error: ${text}`;
  return { role: 'tool', tool_call_id: block['tool_use_id'] as string, content: text };
}

function translateAssistant(content: string | JsonObject[], index: number, t: Translation): ChatMessage {
  if (typeof content === 'string') return { role: 'assistant', content };
  const texts: TextPart[] = [];
  const calls: ToolCall[] = [];
  for (let j = 0; j < content.length; j++) {
    const block = content[j] as JsonObject;
    switch (block['type']) {
      case 'text':
        texts.push({ type: 'text', text: block['text'] as string });
        break;
      case 'tool_use':
        if (block['caller'] !== undefined && (block['caller'] as JsonObject)['type'] !== 'direct') t.refuse(['messages', index, 'content', j, 'caller'], 'a tool call made by a server tool');
        calls.push({ id: block['id'] as string, type: 'function', function: { name: block['name'] as string, arguments: JSON.stringify(block['input']) } });
        break;
      default:
        t.refuse(['messages', index, 'content', j], blockName(block['type']));
        t.leaveOut(block);
    }
  }
  const message: ChatMessage = { role: 'assistant', content: texts.length === 0 ? null : texts.length === 1 ? (texts[0] as TextPart).text : texts };
  if (calls.length > 0) message.tool_calls = calls;
  return message;
}

function translateTools(tools: JsonObject[], t: Translation): ToolDefinition[] {
  const out: ToolDefinition[] = [];
  for (let i = 0; i < tools.length; i++) {
    const tool = tools[i] as JsonObject;
    const type = tool['type'];
    if (typeof type === 'string' && type !== 'custom' && isServerToolType(type)) {
      t.refuse(['tools', i], `the server tool '${type}'`);
      t.leaveOut(tool);
      t.leftOutTokens += serverToolReadTokens(tool);
      continue;
    }
    if (tool['defer_loading'] === true) {
      // Tool search may load it at the Anthropic upstream: the bound counts it.
      t.leaveOut(tool);
      continue;
    }
    const name = tool['name'] as string;
    if (!OPENAI_TOOL_NAME.test(name)) t.refuse(['tools', i, 'name'], 'a tool name longer than 64 characters');
    if (tool['input_examples'] !== undefined) {
      t.refuse(['tools', i, 'input_examples'], 'input_examples');
      t.leaveOut(tool['input_examples']);
    }
    const callers = tool['allowed_callers'] as string[] | undefined;
    if (callers !== undefined && !(callers.length === 1 && callers[0] === 'direct')) t.refuse(['tools', i, 'allowed_callers'], 'a tool callable from code execution');
    const fn: ToolDefinition['function'] = { name, parameters: tool['input_schema'] as JsonObject };
    if (tool['description'] !== undefined) fn.description = tool['description'] as string;
    if (tool['strict'] !== undefined) fn.strict = tool['strict'] as boolean;
    out.push({ type: 'function', function: fn });
  }
  return out;
}

function translateToolChoice(choice: JsonObject, request: ChatRequest, t: Translation): void {
  const tools = request.tools;
  const type = choice['type'];
  if (tools === undefined) {
    // No client tool survives (none given, server tools, deferred ones): auto and none say nothing then.
    if (type === 'any' || type === 'tool') t.refuse(['tool_choice'], `a tool_choice of type '${type}' without a client tool to call`);
    return;
  }
  let translated: ToolChoice;
  switch (type) {
    case 'auto':
      translated = 'auto';
      break;
    case 'any':
      translated = 'required';
      break;
    case 'tool': {
      const name = choice['name'] as string;
      if (!tools.some((tool) => tool.function.name === name)) t.refuse(['tool_choice', 'name'], `a tool_choice naming the deferred tool '${name}'`);
      translated = { type: 'function', function: { name } };
      break;
    }
    default:
      translated = 'none';
  }
  request.tool_choice = translated;
  if (choice['disable_parallel_tool_use'] === true) request.parallel_tool_calls = false;
}
