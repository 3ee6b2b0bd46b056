// What the built-in demo provider answers: a pure, deterministic function of
// the request. The demo provider is NOT a language model; it exists so the
// gateway can be tried, and SDK integrations tested, without any upstream.
//
// Rules (the same request always gives the same reply; only ids vary):
//
// 1. A tool call is made when `tools` is non-empty and either
//    - tool_choice is "required" or names a function (this wins over rule 2), or
//    - tool_choice is absent or "auto", the last message is not a tool result,
//      and the last user message plainly asks for what a tool does: it contains
//      the tool's name (case-insensitive), or one of the words of its name or
//      description ("What is the weather in Paris?" asks get_weather, "Get the
//      current weather for a city"; generic words such as get, list, the, for
//      do not count), or one of the whole words "tool", "tools", "call", "use".
//    The tool is the named one, else the one whose name appears in that text,
//    else the one sharing the most words with it (name words count double),
//    else the first tool. Its arguments are built from the parameters schema
//    and the user's words (see `demoArguments`). tool_choice "none" never calls
//    a tool.
// 2. When the last message is a tool result, the reply quotes it:
//    `Portcullis demo provider (not a language model). The tool returned: "<result>". The request had N messages.`
// 3. Otherwise the reply echoes the last user message (and counts its images):
//    `Portcullis demo provider (not a language model). You said: "<text>". The request had N messages.`
//    `... You said: "<text>" and sent 1 image. The request had N messages.`
//    Quoted texts are cut to 200 characters, with "…" added when cut.
// 4. With response_format json_object the text is a JSON object instead:
//    `{"demo": true, "note": "...", "echo": "<text>", "messages": N}` ("tool_result"
//    in place of "echo" after a tool result).
// 5. With response_format json_schema the text is the schema's instance by the
//    rules of ../schema/sample-value.ts, the quoted text of rule 2 or 3 in its
//    first free string: it passes the gateway's own check of a strict schema.
//    A json_schema without a schema gets rule 4's object. When the value would
//    be larger than sample-value.ts builds (MAX_VALUES values, MAX_CHARACTERS
//    characters), the reply is a refusal (content null, `refusal` the text
//    TOO_LARGE), which the gateway's check lets through as it does a model's.
//
// Tokens are counted roughly: a reply is cut into pieces at spaces (one piece =
// one completion token); a tool call costs 1 token for its name plus one per
// 16-character piece of its arguments. When the maximum output (max_completion_tokens
// ?? max_tokens ?? 4096) is reached the reply is cut there with finish_reason
// "length". Prompt tokens are ceil(characters of all message text / 4).

import type { ChatMessage, ChatRequest, FinishReason, ToolDefinition, Usage } from '../chat/types.ts';
import { buildSample, MAX_CHARACTERS, MAX_VALUES } from '../schema/sample-value.ts';

const DEMO_NOTICE = 'Portcullis demo provider (not a language model).';
const QUOTE_LIMIT = 200;
const ARGUMENT_PIECE_LENGTH = 16;
const DEFAULT_MAX_OUTPUT = 4096;
const SCHEMA_DEPTH_LIMIT = 8;
/** The refusal of a json_schema whose value is larger than the demo builds. */
export const TOO_LARGE =
  `${DEMO_NOTICE} The demo does not answer this schema: its value would be larger than the demo builds ` +
  `(${MAX_VALUES.toLocaleString('en-US')} values or ${MAX_CHARACTERS.toLocaleString('en-US')} characters of JSON).`;
const TRIGGER_WORDS: ReadonlySet<string> = new Set(['tool', 'tools', 'call', 'use']);

export const DemoReplyKind = {
  Text: 'text',
  ToolCall: 'tool_call',
  Refusal: 'refusal',
} as const;
export type DemoReplyKind = (typeof DemoReplyKind)[keyof typeof DemoReplyKind];

export type DemoReply =
  | {
      kind: typeof DemoReplyKind.Text;
      /** Content pieces in order; joined they are the whole (possibly cut) text. */
      pieces: string[];
      finishReason: FinishReason;
      usage: Usage;
    }
  | {
      kind: typeof DemoReplyKind.Refusal;
      /** Refusal pieces in order; joined they are the whole (possibly cut) refusal. */
      pieces: string[];
      finishReason: FinishReason;
      usage: Usage;
    }
  | {
      kind: typeof DemoReplyKind.ToolCall;
      toolName: string;
      /** Argument pieces in order; joined they are the (possibly cut) JSON text. */
      pieces: string[];
      finishReason: FinishReason;
      usage: Usage;
    };

export function planDemoReply(request: ChatRequest): DemoReply {
  const maxOutput = request.max_completion_tokens ?? request.max_tokens ?? DEFAULT_MAX_OUTPUT;
  const promptTokens = Math.ceil(countMessageChars(request.messages) / 4);
  const usageFor = (completionTokens: number): Usage => ({
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: 0 },
  });

  const tool = chooseTool(request);
  if (tool !== undefined && maxOutput > 0) {
    const all = splitArguments(JSON.stringify(demoArguments(tool.function.parameters, lastUserText(request.messages))));
    const kept = Math.min(all.length, maxOutput - 1);
    return {
      kind: DemoReplyKind.ToolCall,
      toolName: tool.function.name,
      pieces: all.slice(0, kept),
      finishReason: kept < all.length ? 'length' : 'tool_calls',
      usage: usageFor(1 + kept),
    };
  }

  const answer = replyAnswer(request);
  const all = splitWords(answer ?? TOO_LARGE);
  const kept = Math.max(0, Math.min(all.length, maxOutput));
  return {
    kind: answer === undefined ? DemoReplyKind.Refusal : DemoReplyKind.Text,
    pieces: all.slice(0, kept),
    finishReason: kept < all.length ? 'length' : 'stop',
    usage: usageFor(kept),
  };
}

/** Rule 1 of the header: the tool to call, or undefined for a text reply. */
export function chooseTool(request: ChatRequest): ToolDefinition | undefined {
  const tools = request.tools ?? [];
  const choice = request.tool_choice;
  if (tools.length === 0 || choice === 'none') return undefined;
  if (typeof choice === 'object') {
    const named = tools.find((t) => t.function.name === choice.function.name);
    return named ?? { type: 'function', function: { name: choice.function.name } };
  }
  const userText = lastUserText(request.messages).toLowerCase();
  const mentioned = tools.find((t) => t.function.name !== '' && mentionsWord(userText, t.function.name.toLowerCase())) ?? bestMatch(tools, userText);
  if (choice === 'required') return mentioned ?? tools[0];
  if (lastMessage(request.messages)?.role === 'tool') return undefined;
  if (mentioned !== undefined) return mentioned;
  return hasTriggerWord(userText) ? tools[0] : undefined;
}

/** `word` in `text` on its own: not inside a longer name ("run" is not in "brunch"). */
function mentionsWord(text: string, word: string): boolean {
  const isNameChar = (code: number): boolean => (code >= 0x61 && code <= 0x7a) || (code >= 0x30 && code <= 0x39) || code === 0x5f || code === 0x2d;
  for (let at = text.indexOf(word); at !== -1; at = text.indexOf(word, at + 1)) {
    const before = at === 0 ? -1 : text.charCodeAt(at - 1);
    const after = at + word.length >= text.length ? -1 : text.charCodeAt(at + word.length);
    if (!isNameChar(before) && !isNameChar(after)) return true;
  }
  return false;
}

/** Words that say nothing about what a tool does. */
const GENERIC_WORDS: ReadonlySet<string> = new Set(
  ('a an and are as at be by can could do does for from function get give has have how i in info information is it its list look lookup ' +
    'make me my of on or please run set show tell that the this to tool tools up use what when where which who why will with would you your current data details')
    .split(' '),
);

/** Lower-case content words, a plural "s" dropped, generic words left out. */
function contentWords(text: string): Set<string> {
  const words = new Set<string>();
  // camelCase and snake_case names come apart into their words.
  const spaced = text.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  for (const raw of spaced.split(/[^a-z0-9]+/)) {
    if (raw.length < 3 || GENERIC_WORDS.has(raw)) continue;
    words.add(raw.length > 3 && raw.endsWith('s') && !raw.endsWith('ss') ? raw.slice(0, -1) : raw);
  }
  return words;
}

/** The tool sharing the most content words with the user's text; name words count double. */
function bestMatch(tools: readonly ToolDefinition[], userText: string): ToolDefinition | undefined {
  const said = contentWords(userText);
  let best: ToolDefinition | undefined;
  let bestScore = 0;
  for (const tool of tools) {
    const nameWords = contentWords(tool.function.name);
    let score = 0;
    for (const word of nameWords) if (said.has(word)) score += 2;
    for (const word of contentWords(tool.function.description ?? '')) if (said.has(word) && !nameWords.has(word)) score += 1;
    if (score > bestScore) {
      best = tool;
      bestScore = score;
    }
  }
  return best;
}

/**
 * Plausible arguments: the schema's placeholders (`placeholderArguments`),
 * with string properties that name a place or a query filled from the user's
 * words: a capitalised name after "in", "at", "for", "near", "to" or "from"
 * for city, location, place and the like ("Paris"), the user's text (cut to
 * 200 characters) for query, question, text, prompt, input and the like.
 */
export function demoArguments(parameters: Record<string, unknown> | undefined, userText: string): Record<string, unknown> {
  const args = placeholderArguments(parameters);
  const properties = asRecord(parameters?.['properties']) ?? {};
  const place = placeIn(userText);
  for (const name of Object.keys(args)) {
    if (args[name] !== 'demo') continue;
    const schema = asRecord(properties[name]);
    if (schema !== undefined && schema['type'] !== undefined && schema['type'] !== 'string') continue;
    const key = name.toLowerCase();
    if (place !== undefined && PLACE_PROPERTY.test(key)) args[name] = place;
    else if (userText !== '' && QUERY_PROPERTY.test(key)) args[name] = quote(userText);
  }
  return args;
}

const PLACE_PROPERTY = /^(city|town|location|place|country|region|destination|origin|address|where)(_?name)?$/;
const QUERY_PROPERTY = /^(q|query|question|search|search_?query|text|prompt|input|message|keywords?|terms?|topic)$/;

/** The first capitalised name after a preposition of place: "the weather in New York?" → "New York". */
function placeIn(text: string): string | undefined {
  const match = /\b(?:[Ii]n|[Aa]t|[Ff]or|[Nn]ear|[Tt]o|[Ff]rom)\s+(\p{Lu}[\p{L}'-]*(?:\s+\p{Lu}[\p{L}'-]*)*)/u.exec(text);
  return match?.[1];
}

/**
 * Deterministic arguments from a JSON Schema: every required property gets a
 * typed placeholder: string "demo", number/integer 1, boolean true, null null,
 * array [], enum its first entry, const its value, anyOf/oneOf the first option,
 * object the same rule applied to its own required properties (to a depth of 8).
 * Optional properties are left out.
 */
export function placeholderArguments(parameters: Record<string, unknown> | undefined): Record<string, unknown> {
  return objectPlaceholder(parameters, 0);
}

function objectPlaceholder(schema: Record<string, unknown> | undefined, depth: number): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  if (schema === undefined || depth >= SCHEMA_DEPTH_LIMIT) return result;
  const required = schema['required'];
  const properties = asRecord(schema['properties']) ?? {};
  if (!Array.isArray(required)) return result;
  for (const name of required) {
    // A name listed twice is built once: repeats would multiply the work at every level.
    if (typeof name !== 'string' || Object.hasOwn(result, name)) continue;
    const value = valuePlaceholder(Object.hasOwn(properties, name) ? properties[name] : undefined, depth + 1);
    Object.defineProperty(result, name, { value, enumerable: true, writable: true, configurable: true });
  }
  return result;
}

function valuePlaceholder(raw: unknown, depth: number): unknown {
  const schema = asRecord(raw);
  if (schema === undefined) return 'demo';
  const enumValues = schema['enum'];
  if (Array.isArray(enumValues) && enumValues.length > 0) return enumValues[0];
  if (Object.hasOwn(schema, 'const')) return schema['const'];
  let type = schema['type'];
  if (Array.isArray(type)) type = type.find((t) => t !== 'null') ?? 'null';
  if (type === undefined) {
    const options = schema['anyOf'] ?? schema['oneOf'];
    if (Array.isArray(options) && options.length > 0) return valuePlaceholder(options[0], depth);
    if (schema['properties'] !== undefined) type = 'object';
  }
  switch (type) {
    case 'number':
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array':
      return [];
    case 'object':
      return objectPlaceholder(schema, depth);
    default:
      return 'demo';
  }
}

/** Rules 2-5 of the header: the reply's text, or its refusal (TOO_LARGE). */
export function replyText(request: ChatRequest): string {
  return replyAnswer(request) ?? TOO_LARGE;
}

/** Rules 2-5 of the header; undefined when rule 5's value is too large to build. */
function replyAnswer(request: ChatRequest): string | undefined {
  const messages = request.messages;
  const afterTool = lastMessage(messages)?.role === 'tool';
  const quoted = quote(afterTool ? messageText(lastMessage(messages)) : lastUserText(messages));
  const format = request.response_format;
  if (format?.type === 'json_schema' && format.json_schema.schema !== undefined) {
    const sample = buildSample(format.json_schema.schema, quoted);
    return sample.complete ? JSON.stringify(sample.value) : undefined;
  }
  if (format?.type === 'json_object' || format?.type === 'json_schema') {
    const entries: Array<[string, unknown]> = [
      ['demo', true],
      ['note', DEMO_NOTICE],
      [afterTool ? 'tool_result' : 'echo', quoted],
      ['messages', messages.length],
    ];
    const images = afterTool ? 0 : lastUserImages(messages);
    if (images > 0) entries.push(['images', images]);
    return `{${entries.map(([key, value]) => `${JSON.stringify(key)}: ${JSON.stringify(value)}`).join(', ')}}`;
  }
  const count = `The request had ${messages.length} ${messages.length === 1 ? 'message' : 'messages'}.`;
  const images = afterTool ? 0 : lastUserImages(messages);
  const sent = images === 0 ? '' : ` and sent ${images} ${images === 1 ? 'image' : 'images'}`;
  return afterTool
    ? `${DEMO_NOTICE} The tool returned: "${quoted}". ${count}`
    : `${DEMO_NOTICE} You said: "${quoted}"${sent}. ${count}`;
}

/** Pieces at spaces: the first word, then " word" for each following one. */
export function splitWords(text: string): string[] {
  const pieces: string[] = [];
  let start = 0;
  for (let at = text.indexOf(' ', 1); at !== -1; at = text.indexOf(' ', at + 1)) {
    pieces.push(text.slice(start, at));
    start = at;
  }
  if (start < text.length) pieces.push(text.slice(start));
  return pieces;
}

/** 16-character pieces that never split a surrogate pair. */
export function splitArguments(json: string): string[] {
  const pieces: string[] = [];
  let start = 0;
  while (start < json.length) {
    let end = Math.min(start + ARGUMENT_PIECE_LENGTH, json.length);
    if (end < json.length && isLowSurrogate(json.charCodeAt(end))) end++;
    pieces.push(json.slice(start, end));
    start = end;
  }
  return pieces;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

function quote(text: string): string {
  let count = 0;
  let end = 0;
  for (const char of text) {
    if (count === QUOTE_LIMIT) return `${text.slice(0, end)}…`;
    count++;
    end += char.length;
  }
  return text;
}

function hasTriggerWord(lowerText: string): boolean {
  for (const word of lowerText.split(/[^a-z0-9_]+/)) {
    if (TRIGGER_WORDS.has(word)) return true;
  }
  return false;
}

function lastMessage(messages: readonly ChatMessage[]): ChatMessage | undefined {
  return messages[messages.length - 1];
}

function lastUserText(messages: readonly ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as ChatMessage;
    if (message.role === 'user') return messageText(message);
  }
  return '';
}

/** How many image parts the last user message has. */
function lastUserImages(messages: readonly ChatMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as ChatMessage;
    if (message.role !== 'user') continue;
    return Array.isArray(message.content) ? message.content.filter((part) => part.type === 'image_url').length : 0;
  }
  return 0;
}

/** The text of a message: string content, or its text parts joined. */
function messageText(message: ChatMessage | undefined): string {
  const content = message?.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const part of content) if (part.type === 'text') text += part.text;
  return text;
}

function countMessageChars(messages: readonly ChatMessage[]): number {
  let chars = 0;
  for (const message of messages) chars += messageText(message).length;
  return chars;
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
