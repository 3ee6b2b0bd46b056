// A validated OpenAI chat request → an Anthropic Messages API request body.
// Pure: data in, data out; a request Anthropic cannot express faithfully is a
// 400 here, before anything is sent.
// Wire format: https://docs.anthropic.com/en/api/messages
//
// Decisions (each is also pinned by a test):
// - system and developer messages, wherever they stand, become the one
//   top-level `system` prompt, joined in order with a blank line. Anthropic has
//   no system turn inside `messages`; a late system message keeps its authority
//   and loses only its position (agents insert such reminders mid-conversation,
//   and refusing them would break those clients).
// - Consecutive turns of one role are merged into one (tool results are user
//   turns on Anthropic); within a user turn, tool_result blocks come first, as
//   Anthropic requires.
// - Empty text is dropped (Anthropic refuses empty text blocks); a turn left
//   with no block at all is omitted.
// - `name` on a message and `detail` on an image have no Anthropic equivalent
//   and are dropped; an assistant `refusal` is sent as the assistant's text.
// - temperature above 1 is a 400, never clamped: Anthropic accepts 0 to 1.
// - response_format json_object is a 400: Anthropic has no JSON mode, and a
//   prompt instruction would promise what the gateway cannot guarantee.

import type { ChatMessage, ChatRequest, ContentPart, ToolChoice, ToolDefinition } from '../chat/types.ts';
import { InvalidRequestError } from '../errors/api-error.ts';

interface AnthropicTextBlock {
  type: 'text';
  text: string;
}

interface AnthropicImageBlock {
  type: 'image';
  source: { type: 'url'; url: string };
}

interface AnthropicToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
}

interface AnthropicToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  /** Absent when the tool said nothing. */
  content?: string | AnthropicTextBlock[];
}

export type AnthropicContentBlock = AnthropicTextBlock | AnthropicImageBlock | AnthropicToolUseBlock | AnthropicToolResultBlock;

export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: AnthropicContentBlock[];
}

export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
}

export type AnthropicToolChoice = { type: 'none' } | { type: 'auto' } | { type: 'any' } | { type: 'tool'; name: string };

export interface AnthropicRequest {
  model: string;
  max_tokens: number;
  system?: string;
  messages: AnthropicMessage[];
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  stream?: boolean;
}

/** Anthropic requires max_tokens; the gateway always sets one, and this is the
 * spec's default for when neither field is set. */
const DEFAULT_MAX_TOKENS = 4096;
/** Anthropic's temperature range is 0 to 1 (OpenAI's is 0 to 2). */
const MAX_TEMPERATURE = 1;
const SYSTEM_SEPARATOR = '\n\n';

/** The Anthropic request body for `req`. Throws InvalidRequestError (400). */
export function toAnthropicRequest(req: ChatRequest): AnthropicRequest {
  checkSupported(req);
  const system: string[] = [];
  const turns: AnthropicMessage[] = [];

  for (let i = 0; i < req.messages.length; i++) {
    const message = req.messages[i] as ChatMessage;
    switch (message.role) {
      case 'system':
      case 'developer': {
        const text = plainText(message.content);
        if (text.length > 0) system.push(text);
        break;
      }
      case 'user':
        appendTurn(turns, 'user', userBlocks(message.content));
        break;
      case 'assistant':
        appendTurn(turns, 'assistant', assistantBlocks(message, i));
        break;
      case 'tool':
        appendTurn(turns, 'user', [toolResultBlock(message)]);
        break;
    }
  }
  for (const turn of turns) if (turn.role === 'user') toolResultsFirst(turn.content);

  const body: AnthropicRequest = {
    model: req.model,
    max_tokens: req.max_completion_tokens ?? req.max_tokens ?? DEFAULT_MAX_TOKENS,
    messages: turns,
  };
  if (system.length > 0) body.system = system.join(SYSTEM_SEPARATOR);
  if (req.tools !== undefined && req.tools.length > 0) body.tools = req.tools.map(toAnthropicTool);
  if (req.tool_choice !== undefined) body.tool_choice = toAnthropicToolChoice(req.tool_choice);
  if (req.stop !== undefined) body.stop_sequences = typeof req.stop === 'string' ? [req.stop] : [...req.stop];
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.top_p !== undefined) body.top_p = req.top_p;
  if (req.stream === true) body.stream = true;
  return body;
}

function checkSupported(req: ChatRequest): void {
  if (req.temperature !== undefined && req.temperature > MAX_TEMPERATURE) {
    throw new InvalidRequestError(
      `Invalid value for 'temperature': ${req.temperature}. The provider behind this model alias accepts a temperature from 0 to ${MAX_TEMPERATURE}.`,
      'temperature',
      'invalid_value',
    );
  }
  if (req.response_format?.type === 'json_object') {
    throw new InvalidRequestError(
      "Invalid value for 'response_format.type': 'json_object' is not supported by the provider behind this model alias. " +
        'Ask for JSON in the prompt, or use a model alias served by an OpenAI-compatible provider.',
      'response_format.type',
      'invalid_value',
    );
  }
}

/** Adds `blocks` as a turn of `role`, merged into the previous turn when it has
 * the same role (Anthropic wants user and assistant to alternate). */
function appendTurn(turns: AnthropicMessage[], role: AnthropicMessage['role'], blocks: AnthropicContentBlock[]): void {
  if (blocks.length === 0) return;
  const last = turns[turns.length - 1];
  if (last !== undefined && last.role === role) {
    for (const block of blocks) last.content.push(block);
  } else {
    turns.push({ role, content: blocks });
  }
}

/** Anthropic: in a user turn, tool_result blocks come before any other block.
 * A stable partition, so the order within each group is kept. */
function toolResultsFirst(blocks: AnthropicContentBlock[]): void {
  let sawOther = false;
  let needed = false;
  for (const block of blocks) {
    if (block.type !== 'tool_result') sawOther = true;
    else if (sawOther) {
      needed = true;
      break;
    }
  }
  if (!needed) return;
  const results = blocks.filter((block) => block.type === 'tool_result');
  const others = blocks.filter((block) => block.type !== 'tool_result');
  blocks.length = 0;
  for (const block of results) blocks.push(block);
  for (const block of others) blocks.push(block);
}

/** The text of a system, developer or tool message: its string, or its text
 * parts concatenated (OpenAI reads parts as one text). */
function plainText(content: ChatMessage['content']): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  let text = '';
  for (const part of content) if (part.type === 'text') text += part.text;
  return text;
}

function userBlocks(content: ChatMessage['content']): AnthropicContentBlock[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return textBlocks(content);
  const blocks: AnthropicContentBlock[] = [];
  for (const part of content) {
    const block = partBlock(part);
    if (block !== undefined) blocks.push(block);
  }
  return blocks;
}

function partBlock(part: ContentPart): AnthropicContentBlock | undefined {
  if (part.type === 'text') return part.text.length === 0 ? undefined : { type: 'text', text: part.text };
  // Validation allows https URLs only; Anthropic fetches them itself.
  return { type: 'image', source: { type: 'url', url: part.image_url.url } };
}

function textBlocks(text: string): AnthropicTextBlock[] {
  return text.length === 0 ? [] : [{ type: 'text', text }];
}

function assistantBlocks(message: ChatMessage, messageIndex: number): AnthropicContentBlock[] {
  const blocks: AnthropicContentBlock[] = [];
  const content = message.content;
  if (typeof content === 'string') blocks.push(...textBlocks(content));
  else if (Array.isArray(content)) {
    for (const part of content) {
      const block = partBlock(part);
      if (block !== undefined) blocks.push(block);
    }
  }
  if (typeof message.refusal === 'string') blocks.push(...textBlocks(message.refusal));
  const calls = message.tool_calls ?? [];
  for (let j = 0; j < calls.length; j++) {
    const call = calls[j] as NonNullable<ChatMessage['tool_calls']>[number];
    blocks.push({
      type: 'tool_use',
      id: call.id,
      name: call.function.name,
      input: toolInput(call.function.arguments, `messages[${messageIndex}].tool_calls[${j}].function.arguments`),
    });
  }
  return blocks;
}

/** Anthropic takes a tool call's input as a JSON object, OpenAI as a string of
 * JSON. An empty string (some clients send it for a call without arguments)
 * is the empty object. */
function toolInput(args: string, path: string): Record<string, unknown> {
  if (args.trim().length === 0) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    throw new InvalidRequestError(
      `Invalid value for '${path}': the arguments are not valid JSON, and the provider behind this model alias needs them as a JSON object.`,
      path,
      'invalid_value',
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new InvalidRequestError(
      `Invalid value for '${path}': the provider behind this model alias needs the arguments as a JSON object.`,
      path,
      'invalid_value',
    );
  }
  return parsed as Record<string, unknown>;
}

function toolResultBlock(message: ChatMessage): AnthropicToolResultBlock {
  const block: AnthropicToolResultBlock = { type: 'tool_result', tool_use_id: message.tool_call_id ?? '' };
  const content = message.content;
  if (typeof content === 'string') {
    if (content.length > 0) block.content = content;
  } else if (Array.isArray(content)) {
    const texts: AnthropicTextBlock[] = [];
    for (const part of content) if (part.type === 'text' && part.text.length > 0) texts.push({ type: 'text', text: part.text });
    if (texts.length > 0) block.content = texts;
  }
  return block;
}

function toAnthropicTool(tool: ToolDefinition): AnthropicTool {
  const out: AnthropicTool = {
    name: tool.function.name,
    // OpenAI allows a function without parameters; Anthropic requires a schema.
    input_schema: tool.function.parameters ?? { type: 'object', properties: {} },
  };
  if (tool.function.description !== undefined) out.description = tool.function.description;
  return out;
}

function toAnthropicToolChoice(choice: ToolChoice): AnthropicToolChoice {
  switch (choice) {
    case 'none':
      return { type: 'none' };
    case 'auto':
      return { type: 'auto' };
    case 'required':
      return { type: 'any' };
    default:
      return { type: 'tool', name: choice.function.name };
  }
}
