// A validated Responses request -> the gateway's chat request. Pure.
//
// The translation is always made: routing, limits and the reservation read it
// even when an upstream speaking Responses takes the request (that upstream
// receives the client's own body). `untranslatable` is the first thing an
// upstream speaking only chat completions cannot express, as the 400 it
// answers with, naming the path; null when the translation says everything.
// The table, with the reason for each choice: docs/responses-translation.md.
//
// Choices the table explains:
// - `instructions`, then every system and developer message in order, go
//   into ONE leading system message: the chat templates of many open models
//   (Qwen, Llama, Gemma) refuse a system message anywhere but first.
// - function_call items become tool_calls of an assistant message with the
//   same call ids; consecutive ones (and one right after an assistant
//   message) join that message, as chat completions carries one turn's calls.
//   function_call_output items become tool messages; their images follow as
//   image_url parts of a user message right after the tool messages.
// - what the conversation holds is never dropped: a reasoning item carrying
//   encrypted_content (only the upstream that made it can read it), a hosted
//   tool's call item, an image by file id, a file, is untranslatable. A
//   reasoning item with plain summaries only is left out: chat completions
//   has no place for a model's earlier reasoning (open models' templates drop
//   it too), and putting it in the text would show it as the answer.
// - what is only offered may be left out: a hosted tool (web_search,
//   file_search, ...), a custom tool and a deferred function (loaded only by
//   tool search) are not offered to the model; `leftOutTools` names them, for
//   the access line and a response header. A namespace's functions are
//   offered as plain functions (./tool-names.ts); `namespacedTools` maps their
//   names back.
// - the translation carries its prompt bound (../chat/request-prompt-bound.ts)
//   with what it leaves out added, by the bytes of its JSON.
// - dropped, the answer means the same: store (answered as not stored),
//   include, stream_options, metadata, client_metadata, user,
//   safety_identifier, prompt_cache_key, prompt_cache_retention,
//   prompt_cache_options (but prewarm), service_tier, truncation,
//   context_management, max_tool_calls, top_logprobs, image, text.verbosity,
//   reasoning.summary, reasoning.generate_summary, reasoning.context,
//   reasoning.mode.
import { Buffer } from 'node:buffer';
import { carryPromptBound, measurePrompt } from '../chat/request-prompt-bound.ts';
import type { ChatMessage, ChatRequest, ContentPart, ImagePart, ReasoningEffort, TextPart, ToolCall } from '../chat/types.ts';
import { InvalidRequestError } from '../errors/api-error.ts';
import { renderJsonPath } from '../json/parser.ts';
import type { ResponsesRequest } from './response-request-types.ts';
import { plainFunctionNames, translateToolChoice, translateTools, type TranslationNotes } from './response-tools-to-chat.ts';
import { NamespacedNames, type NamespacedFunction } from './tool-names.ts';

export interface ChatTranslation {
  request: ChatRequest;
  untranslatable: InvalidRequestError | null;
  /** The tools offered that the chat request leaves out, in order: a hosted tool by its type, a client tool by its name (`namespace.name` in a namespace). */
  leftOutTools: string[];
  /** Chat function name -> the namespace tool's function it stands for. */
  namespacedTools: ReadonlyMap<string, NamespacedFunction>;
}

/** Top-level fields with a translation, or dropped on purpose; any other is untranslatable. */
const TRANSLATED = new Set(['model', 'input', 'instructions', 'tools', 'tool_choice', 'parallel_tool_calls', 'max_output_tokens', 'temperature', 'top_p', 'text', 'stream', 'reasoning']);
const DROPPED = new Set([
  'store',
  'include',
  'stream_options',
  'metadata',
  'client_metadata',
  'user',
  'safety_identifier',
  'prompt_cache_key',
  'prompt_cache_retention',
  'prompt_cache_options',
  'service_tier',
  'truncation',
  'context_management',
  'max_tool_calls',
  'top_logprobs',
  'image',
  'background',
  'previous_response_id',
  'conversation',
]);

/** What the 400 calls each documented top-level field without a translation. */
const UNTRANSLATABLE_FIELDS: ReadonlyMap<string, string> = new Map([
  ['prompt', 'a prompt template stored at OpenAI'],
  ['moderation', 'moderation run by OpenAI'],
  ['access_programs', 'access_programs'],
]);
/** Chat completions' reasoning_effort stops at 'xhigh'. */
const CHAT_EFFORTS = new Set(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']);

type JsonObject = Record<string, unknown>;
type Path = ReadonlyArray<string | number>;

/** The first untranslatable thing (its error made once), and the size of what is left out. */
class Translation implements TranslationNotes {
  first: InvalidRequestError | null = null;
  /** UTF-8 bytes of the JSON of everything left out (at least its tokens, as for text; see request-prompt-bound.ts). */
  leftOutTokens = 0;
  leftOutImages = 0;

  leaveOut(value: unknown): void {
    this.leftOutTokens += Buffer.byteLength(JSON.stringify(value), 'utf8');
  }

  refuse(path: Path, what: string): void {
    if (this.first !== null) return;
    const param = renderJsonPath(path);
    this.first = new InvalidRequestError(
      `'${param}': ${what} has no equivalent in OpenAI's chat completions, so no upstream of this model that speaks only chat completions can take the request; only one speaking the Responses API can. Remove it, or use a model served by a provider speaking Responses.`,
      param,
      'unsupported_parameter',
    );
  }
}

/** "a web_search_call item", "an mcp_call item". */
function itemName(type: unknown): string {
  const name = String(type);
  return `${/^[aeiou]/.test(name) ? 'an' : 'a'} ${name} item`;
}

export function toChatRequest(req: ResponsesRequest): ChatTranslation {
  const t = new Translation();
  const items = typeof req.input === 'string' ? [{ role: 'user', content: req.input }] : ((req.input ?? []) as JsonObject[]);
  const names = new NamespacedNames(plainFunctionNames(req.tools as JsonObject[] | undefined, items));
  const leftOutTools: string[] = [];
  const tools = req.tools === undefined ? [] : translateTools(req.tools as JsonObject[], names, leftOutTools, t);

  const system: TextPart[] = [];
  if (typeof req.instructions === 'string' && req.instructions !== '') system.push({ type: 'text', text: req.instructions });
  const messages: ChatMessage[] = [];
  translateItems(items, typeof req.input === 'string', messages, system, names, t);
  if (system.length > 0) messages.unshift({ role: 'system', content: system.length === 1 ? (system[0] as TextPart).text : system });
  if (messages.length === 0) t.refuse(['input'], 'a request without input');

  const request: ChatRequest = { model: req.model, messages };
  if (tools.length > 0) request.tools = tools;
  for (const key of Object.keys(req)) {
    const value = req[key];
    if (value === undefined || value === null || TRANSLATED.has(key) || DROPPED.has(key)) continue;
    t.refuse([key], UNTRANSLATABLE_FIELDS.get(key) ?? `the field '${key}' (passed through for an upstream speaking Responses)`);
    t.leaveOut(value);
  }
  if (req.prompt_cache_options?.prewarm === true) t.refuse(['prompt_cache_options', 'prewarm'], 'a prompt-cache warm-up without an answer');
  if (typeof req.max_output_tokens === 'number') request.max_tokens = req.max_output_tokens;
  if (typeof req.temperature === 'number') request.temperature = req.temperature;
  if (typeof req.top_p === 'number') request.top_p = req.top_p;
  const effort = req.reasoning?.effort;
  if (typeof effort === 'string') {
    if (CHAT_EFFORTS.has(effort)) request.reasoning_effort = effort as ReasoningEffort;
    else t.refuse(['reasoning', 'effort'], `reasoning effort '${effort}' (chat completions' reasoning_effort goes up to 'xhigh')`);
  }
  const format = req.text?.format;
  if (format !== undefined && format.type !== 'text') {
    if (format.type === 'json_object') request.response_format = { type: 'json_object' };
    else {
      const f = format as { name: string; schema: JsonObject; description?: string; strict?: boolean | null };
      const jsonSchema: { name: string; schema: JsonObject; description?: string; strict?: boolean } = { name: f.name, schema: f.schema };
      if (f.description !== undefined) jsonSchema.description = f.description;
      if (typeof f.strict === 'boolean') jsonSchema.strict = f.strict;
      request.response_format = { type: 'json_schema', json_schema: jsonSchema };
    }
  }
  if (req.tool_choice !== undefined) translateToolChoice(req.tool_choice as string | JsonObject, request, names, t);
  if (request.tools !== undefined && typeof req.parallel_tool_calls === 'boolean') request.parallel_tool_calls = req.parallel_tool_calls;
  if (req.stream === true) {
    request.stream = true;
    request.stream_options = { include_usage: true };
  }
  const measured = measurePrompt(request);
  carryPromptBound(request, { tokens: measured.tokens + t.leftOutTokens, imageParts: measured.imageParts + t.leftOutImages });
  return { request, untranslatable: t.first, leftOutTools, namespacedTools: names.byChatName };
}

function translateItems(items: JsonObject[], fromString: boolean, out: ChatMessage[], system: TextPart[], names: NamespacedNames, t: Translation): void {
  /** Images of the function outputs just translated: a user message after their tool messages. */
  let toolImages: ImagePart[] = [];
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as JsonObject;
    const path = fromString ? ['input'] : ['input', i];
    const type = item['type'] ?? 'message';
    if (type !== 'function_call_output' && toolImages.length > 0) {
      out.push({ role: 'user', content: toolImages });
      toolImages = [];
    }
    switch (type) {
      case 'message':
        translateMessage(item, path, out, system, t);
        break;
      case 'function_call':
        appendCall(out, {
          id: item['call_id'] as string,
          type: 'function',
          function: { name: item['namespace'] === undefined ? (item['name'] as string) : names.chatName(item['namespace'] as string, item['name'] as string), arguments: item['arguments'] as string },
        });
        break;
      case 'function_call_output':
        out.push(toolMessage(item, path, toolImages, t));
        break;
      case 'reasoning':
        if (typeof item['encrypted_content'] === 'string' && item['encrypted_content'] !== '') {
          t.refuse([...path, 'encrypted_content'], 'a reasoning item with encrypted_content (reasoning only the kind of upstream that made it can read back)');
        }
        t.leaveOut(item);
        break;
      default:
        t.refuse(path, itemName(type));
        t.leaveOut(item);
    }
  }
  if (toolImages.length > 0) out.push({ role: 'user', content: toolImages });
}

/** A function call joins the assistant message right before it (the turn's text, or its earlier calls). */
function appendCall(out: ChatMessage[], call: ToolCall): void {
  const last = out[out.length - 1];
  if (last !== undefined && last.role === 'assistant') {
    if (last.tool_calls === undefined) last.tool_calls = [call];
    else last.tool_calls.push(call);
    return;
  }
  out.push({ role: 'assistant', content: null, tool_calls: [call] });
}

function translateMessage(item: JsonObject, path: Path, out: ChatMessage[], system: TextPart[], t: Translation): void {
  const role = item['role'] as string;
  const content = item['content'] as string | JsonObject[];
  const contentPath = [...path, 'content'];
  if (role === 'system' || role === 'developer') {
    if (typeof content === 'string') {
      if (content !== '') system.push({ type: 'text', text: content });
      return;
    }
    for (let j = 0; j < content.length; j++) {
      const part = content[j] as JsonObject;
      if (part['type'] === 'input_text') system.push({ type: 'text', text: part['text'] as string });
      else {
        t.refuse([...contentPath, j], `${partName(part['type'])} in a ${role} message`);
        t.leaveOut(part);
      }
    }
    return;
  }
  if (role === 'assistant') {
    const message = assistantMessage(content);
    const last = out[out.length - 1];
    // Text after the turn's function calls (a streamed answer's trailing text) is the same
    // assistant turn: chat completions allows nothing between calls and their tool messages.
    if (last !== undefined && last.role === 'assistant' && last.tool_calls !== undefined) joinAssistant(last, message);
    else out.push(message);
    return;
  }
  if (typeof content === 'string') {
    out.push({ role: 'user', content });
    return;
  }
  const parts: ContentPart[] = [];
  for (let j = 0; j < content.length; j++) {
    const part = inputPart(content[j] as JsonObject, [...contentPath, j], t);
    if (part !== null) parts.push(part);
  }
  if (parts.length === 0) return;
  const only = parts[0] as ContentPart;
  out.push({ role: 'user', content: parts.length === 1 && only.type === 'text' ? only.text : parts });
}

/** "an input_file part". */
function partName(type: unknown): string {
  const name = String(type);
  return `${/^[aeiou]/.test(name) ? 'an' : 'a'} ${name} part`;
}

/** input_text -> text; input_image by URL -> image_url; anything else is untranslatable (null). */
function inputPart(part: JsonObject, path: Path, t: Translation): ContentPart | null {
  switch (part['type']) {
    case 'input_text':
      return { type: 'text', text: part['text'] as string };
    case 'input_image': {
      const url = part['image_url'];
      if (typeof url === 'string') {
        const image: ImagePart = { type: 'image_url', image_url: { url } };
        const detail = part['detail'];
        if (detail === 'low' || detail === 'high' || detail === 'auto') image.image_url.detail = detail;
        return image;
      }
      t.refuse([...path, 'file_id'], 'an image by file id (a file uploaded to OpenAI)');
      t.leftOutImages++;
      return null;
    }
    default:
      t.refuse(path, `${partName(part['type'])} (a file)`);
      t.leaveOut(part);
      return null;
  }
}

/** output_text (and input_text) -> the text; refusal parts -> `refusal`. Annotations (citations) say nothing the text does not. */
/** `next`'s text and refusal appended to `turn`'s. */
function joinAssistant(turn: ChatMessage, next: ChatMessage): void {
  if (typeof next.content === 'string') turn.content = typeof turn.content === 'string' ? turn.content + next.content : next.content;
  if (typeof next.refusal === 'string') turn.refusal = typeof turn.refusal === 'string' ? turn.refusal + next.refusal : next.refusal;
}

function assistantMessage(content: string | JsonObject[]): ChatMessage {
  if (typeof content === 'string') return { role: 'assistant', content };
  const texts: string[] = [];
  const refusals: string[] = [];
  for (const part of content) {
    if (part['type'] === 'refusal') refusals.push(part['refusal'] as string);
    else texts.push(part['text'] as string);
  }
  const message: ChatMessage = { role: 'assistant', content: texts.length === 0 ? null : texts.join('') };
  if (refusals.length > 0) message.refusal = refusals.join('');
  return message;
}

/** A function_call_output -> a tool message with its text; its images are appended to `images`. */
function toolMessage(item: JsonObject, path: Path, images: ImagePart[], t: Translation): ChatMessage {
  const callId = item['call_id'];
  if (typeof callId !== 'string') t.refuse([...path, 'call_id'], 'a function_call_output without a call_id (a tool message needs the id of its call)');
  const output = item['output'] as string | JsonObject[];
  let text = '';
  if (typeof output === 'string') text = output;
  else {
    for (let k = 0; k < output.length; k++) {
      const part = inputPart(output[k] as JsonObject, [...path, 'output', k], t);
      if (part === null) continue;
      if (part.type === 'text') text = text === '' ? part.text : `${text}\n${part.text}`;
      else images.push(part);
    }
  }
  return { role: 'tool', tool_call_id: typeof callId === 'string' ? callId : '', content: text };
}
