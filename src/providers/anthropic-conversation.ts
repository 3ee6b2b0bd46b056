// OpenAI messages → Anthropic's `system` blocks and alternating turns. Pure.
// A conversation Anthropic would refuse, or could take only with another
// meaning, is a 400 naming the message, before anything is sent. The rules
// (docs/config.md, "Provider type anthropic", holds the same list):
// - system and developer messages, wherever they stand, become `system`, one
//   text block per message or text part, in order (never joined into one
//   string). Blank ones (empty or whitespace only) say nothing and are left out.
// - Consecutive turns of one role are merged, as Anthropic itself does; tool
//   messages are user turns, and in a user turn tool results come first.
// - A blank text part is left out where the message keeps other content; a
//   user message with nothing but blank text is refused. An assistant's blank
//   text beside its tool calls is left out; an assistant message that is blank
//   and calls no tool is left out (the model said nothing; refusing it would
//   make a conversation where a model once answered with whitespace impossible
//   to continue). A tool's blank result is sent as a result without content.
// - The last message (system and developer aside) must be from the user or a
//   tool: Anthropic would continue a final assistant message as a prefill.
// - Every tool call is answered by a tool message before the next assistant
//   message, every tool message answers a call of the assistant message before
//   it, and no tool-call id is used twice.
// Wire format: https://docs.anthropic.com/en/api/messages

import type { ChatMessage, ContentPart } from '../chat/types.ts';
import { InvalidRequestError } from '../errors/api-error.ts';
import { toAnthropicToolId } from './anthropic-tool-ids.ts';

export interface AnthropicTextBlock {
  type: 'text';
  text: string;
}

export interface AnthropicImageBlock {
  type: 'image';
  source: { type: 'url'; url: string };
}

export interface AnthropicToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
}

export interface AnthropicToolResultBlock {
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

export interface AnthropicConversation {
  system: AnthropicTextBlock[];
  messages: AnthropicMessage[];
}

/** Where a block came from, for errors: the message index and, for a tool
 * call, its index in tool_calls. */
interface Origin {
  message: number;
  call: number;
}

interface Turn {
  role: AnthropicMessage['role'];
  blocks: AnthropicContentBlock[];
  origins: Origin[];
}

/**
 * Whitespace as any of Anthropic's likely checkers sees it: JavaScript's
 * trim() set, plus what Python's str.isspace() and Unicode White_Space add
 * (U+001C to U+001F, U+0085). A string of only these is blank; the union is
 * the safe side: a blank block is never sent.
 */
const BLANK = /^[\s\u001c-\u001f\u0085]*$/;

/** True for '' and for text of whitespace only. */
export function isBlank(text: string): boolean {
  return BLANK.test(text);
}

function refuse(param: string, why: string): never {
  throw new InvalidRequestError(`Invalid value for '${param}': ${why}`, param, 'invalid_value');
}

export function toAnthropicConversation(messages: readonly ChatMessage[]): AnthropicConversation {
  const system: AnthropicTextBlock[] = [];
  const turns: Turn[] = [];
  let last = -1;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i] as ChatMessage;
    switch (message.role) {
      case 'system':
      case 'developer':
        for (const text of texts(message.content)) if (!isBlank(text)) system.push({ type: 'text', text });
        continue;
      case 'user':
        appendTurn(turns, 'user', userBlocks(message.content, i), i);
        break;
      case 'assistant':
        appendTurn(turns, 'assistant', assistantBlocks(message, i), i);
        break;
      case 'tool':
        appendTurn(turns, 'user', [toolResultBlock(message)], i);
        break;
    }
    last = i;
  }

  if (last === -1) {
    refuse(
      'messages',
      'there is no user message, only system or developer messages. The provider behind this model alias needs at least one user message to answer.',
    );
  }
  if ((messages[last] as ChatMessage).role === 'assistant') {
    refuse(
      `messages[${last}].role`,
      'the conversation ends with an assistant message. The provider behind this model alias would continue that message as the beginning of its own answer (a prefill), which is not what this request means. End the conversation with a user or tool message.',
    );
  }
  for (const turn of turns) if (turn.role === 'user') toolResultsFirst(turn);
  checkToolPairing(turns);
  return { system, messages: turns.map((turn) => ({ role: turn.role, content: turn.blocks })) };
}

/** Adds blocks as a turn of `role`, merged into the previous turn of the same
 * role (Anthropic combines consecutive turns of one role too). */
function appendTurn(turns: Turn[], role: Turn['role'], blocks: AnthropicContentBlock[], message: number): void {
  if (blocks.length === 0) return;
  // A message's tool_use blocks are its tool_calls, in order.
  let calls = 0;
  const origins = blocks.map((block) => ({ message, call: block.type === 'tool_use' ? calls++ : -1 }));
  const previous = turns[turns.length - 1];
  if (previous !== undefined && previous.role === role) {
    previous.blocks.push(...blocks);
    previous.origins.push(...origins);
  } else {
    turns.push({ role, blocks, origins });
  }
}

/** Anthropic: in a user turn, tool_result blocks come before any other
 * block. A stable partition, so each group keeps its order. */
function toolResultsFirst(turn: Turn): void {
  const order = turn.blocks.map((_, k) => k);
  order.sort((a, b) => rank(turn.blocks[a]) - rank(turn.blocks[b]) || a - b);
  turn.blocks = order.map((k) => turn.blocks[k] as AnthropicContentBlock);
  turn.origins = order.map((k) => turn.origins[k] as Origin);
}

function rank(block: AnthropicContentBlock | undefined): number {
  return block?.type === 'tool_result' ? 0 : 1;
}

/** The text of each text part, or the string itself. */
function texts(content: ChatMessage['content']): string[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return [content];
  const out: string[] = [];
  for (const part of content) if (part.type === 'text') out.push(part.text);
  return out;
}

function userBlocks(content: ChatMessage['content'], index: number): AnthropicContentBlock[] {
  const blocks: AnthropicContentBlock[] = [];
  if (typeof content === 'string') {
    if (!isBlank(content)) blocks.push({ type: 'text', text: content });
  } else if (Array.isArray(content)) {
    for (const part of content) {
      const block = partBlock(part);
      if (block !== undefined) blocks.push(block);
    }
  }
  if (blocks.length === 0) {
    refuse(
      `messages[${index}].content`,
      'the user message is empty or only whitespace. The provider behind this model alias refuses text without a visible character, and leaving the message out would change the conversation. Remove the message or give it content.',
    );
  }
  return blocks;
}

function partBlock(part: ContentPart): AnthropicContentBlock | undefined {
  if (part.type === 'text') return isBlank(part.text) ? undefined : { type: 'text', text: part.text };
  // Validation allows https URLs only; Anthropic fetches them itself.
  return { type: 'image', source: { type: 'url', url: part.image_url.url } };
}

function assistantBlocks(message: ChatMessage, index: number): AnthropicContentBlock[] {
  const blocks: AnthropicContentBlock[] = [];
  for (const text of texts(message.content)) if (!isBlank(text)) blocks.push({ type: 'text', text });
  if (typeof message.refusal === 'string' && !isBlank(message.refusal)) blocks.push({ type: 'text', text: message.refusal });
  const calls = message.tool_calls ?? [];
  for (let j = 0; j < calls.length; j++) {
    const call = calls[j] as NonNullable<ChatMessage['tool_calls']>[number];
    blocks.push({
      type: 'tool_use',
      id: toAnthropicToolId(call.id),
      name: call.function.name,
      input: toolInput(call.function.arguments, `messages[${index}].tool_calls[${j}].function.arguments`),
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
    refuse(path, 'the arguments are not valid JSON, and the provider behind this model alias needs them as a JSON object.');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    refuse(path, 'the provider behind this model alias needs the arguments as a JSON object.');
  }
  return parsed as Record<string, unknown>;
}

function toolResultBlock(message: ChatMessage): AnthropicToolResultBlock {
  const block: AnthropicToolResultBlock = { type: 'tool_result', tool_use_id: toAnthropicToolId(message.tool_call_id ?? '') };
  const content = message.content;
  if (typeof content === 'string') {
    if (!isBlank(content)) block.content = content;
  } else if (Array.isArray(content)) {
    const parts: AnthropicTextBlock[] = [];
    for (const text of texts(content)) if (!isBlank(text)) parts.push({ type: 'text', text });
    if (parts.length > 0) block.content = parts;
  }
  return block;
}

/**
 * Anthropic: "Each tool_use block must have a corresponding tool_result block
 * in the next message", "Each tool_result block must have a corresponding
 * tool_use block in the previous message", and tool_use ids are unique.
 * OpenAI asks the same of a conversation; here it is checked before sending.
 */
function checkToolPairing(turns: readonly Turn[]): void {
  const seenCalls = new Set<string>();
  for (let t = 0; t < turns.length; t++) {
    const turn = turns[t] as Turn;
    if (turn.role === 'assistant') {
      const answered = answeredIds(turns[t + 1]);
      for (let k = 0; k < turn.blocks.length; k++) {
        const block = turn.blocks[k] as AnthropicContentBlock;
        if (block.type !== 'tool_use') continue;
        const origin = turn.origins[k] as Origin;
        const param = `messages[${origin.message}].tool_calls[${origin.call}].id`;
        if (seenCalls.has(block.id)) {
          refuse(param, 'an earlier tool call has the same id. The provider behind this model alias needs every tool call id to be unique.');
        }
        seenCalls.add(block.id);
        if (!answered.has(block.id)) {
          refuse(
            param,
            'no tool message answers this tool call before the conversation goes on. The provider behind this model alias needs each tool call answered by a tool message with its tool_call_id, right after the assistant message.',
          );
        }
      }
    } else {
      const previous = turns[t - 1];
      const calls = new Set<string>();
      if (previous !== undefined) for (const block of previous.blocks) if (block.type === 'tool_use') calls.add(block.id);
      const results = new Set<string>();
      for (let k = 0; k < turn.blocks.length; k++) {
        const block = turn.blocks[k] as AnthropicContentBlock;
        if (block.type !== 'tool_result') continue;
        const param = `messages[${(turn.origins[k] as Origin).message}].tool_call_id`;
        if (!calls.has(block.tool_use_id)) {
          refuse(
            param,
            'it does not answer a tool call of the assistant message right before it. The provider behind this model alias needs every tool message to answer a tool call of the preceding assistant message.',
          );
        }
        if (results.has(block.tool_use_id)) {
          refuse(param, 'an earlier tool message already answers this tool call. The provider behind this model alias takes one result per tool call.');
        }
        results.add(block.tool_use_id);
      }
    }
  }
}

function answeredIds(turn: Turn | undefined): Set<string> {
  const ids = new Set<string>();
  if (turn !== undefined && turn.role === 'user') for (const block of turn.blocks) if (block.type === 'tool_result') ids.add(block.tool_use_id);
  return ids;
}
