// The answer to a request with response_format json_schema and strict true,
// held to its schema: the content of choice 0 parsed with the gateway's own
// bounded JSON parser (../json/), then checked by the compiled schema
// (../schema/compile.ts). Pure: a whole completion is judged at once
// (checkCompletionAnswer); a stream chunk by chunk (StreamedAnswerCheck), its
// content fed to the parser as it arrives and judged when the chunk with
// choice 0's finish reason comes.
//
// What is not checked, and why (the openai SDK's parse() is the measure: the
// gateway checks at least every answer it would parse):
// - finish_reason `length` or `content_filter`: the answer is cut or withheld
//   and says so; parse() throws LengthFinishReasonError or
//   ContentFilterFinishReasonError on it, and another target would cut at the
//   same max_tokens;
// - a `refusal`: the model declined, and the refusal takes the content's
//   place (parse() leaves `parsed` null);
// - tool calls with no content: the model called a tool instead of answering
//   (parse() leaves `parsed` null). Content beside tool calls is checked.
// Anything else must be a JSON value that the schema accepts: no content at
// all, or text that is not JSON, fails at `$`.

import { Buffer } from 'node:buffer';
import { createJsonParser, JsonParseError, type JsonParser } from '../json/parser.ts';
import type { CompiledSchema, SchemaViolation } from '../schema/compile.ts';
import type { ChatCompletion, ChatCompletionChunk, FinishReason } from './types.ts';

export type { SchemaViolation } from '../schema/compile.ts';

const HIGH_SURROGATE_MIN = 0xd800;
const HIGH_SURROGATE_MAX = 0xdbff;

/**
 * The answer's text on its way into the parser. A delta that ends inside a
 * surrogate pair keeps its high half back for the next one, so the bytes parsed
 * are those of the joined text (encoding each half alone would make two U+FFFD).
 */
class AnswerText {
  private readonly parser: JsonParser;
  private readonly maxBytes: number;
  private bytes = 0;
  private heldSurrogate = '';
  private failure: JsonParseError | null = null;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
    this.parser = createJsonParser({ limits: { maxBytes } });
  }

  /** True while no text came (or only an unpaired half in waiting). */
  get empty(): boolean {
    return this.bytes === 0 && this.heldSurrogate === '';
  }

  feed(text: string): void {
    if (this.failure !== null || text.length === 0) return;
    let whole = this.heldSurrogate === '' ? text : this.heldSurrogate + text;
    this.heldSurrogate = '';
    const last = whole.charCodeAt(whole.length - 1);
    if (last >= HIGH_SURROGATE_MIN && last <= HIGH_SURROGATE_MAX) {
      this.heldSurrogate = whole.slice(-1);
      whole = whole.slice(0, -1);
      if (whole.length === 0) return;
    }
    const chunk = Buffer.from(whole, 'utf8');
    this.bytes += chunk.length;
    this.push(chunk);
  }

  /** The schema's verdict on the whole text. */
  judge(schema: CompiledSchema): SchemaViolation | null {
    if (this.heldSurrogate !== '') {
      // Unpaired at the end: encoded as the joined text would be (U+FFFD).
      const chunk = Buffer.from(this.heldSurrogate, 'utf8');
      this.heldSurrogate = '';
      this.bytes += chunk.length;
      this.push(chunk);
    }
    if (this.bytes === 0) return rootViolation('expected a JSON value, got no content');
    let value: unknown;
    if (this.failure === null) {
      try {
        value = this.parser.end();
      } catch (error) {
        if (!(error instanceof JsonParseError)) throw error;
        this.failure = error;
      }
    }
    const failure = this.failure;
    if (failure !== null) {
      if (failure.limit === 'maxBytes') return rootViolation(`the answer is longer than the ${this.maxBytes} bytes the gateway checks`);
      // The parser's code and offset, never its text: the answer is not quoted.
      return rootViolation(`expected a JSON value, got text that is not JSON (${failure.code} at byte ${failure.offset})`);
    }
    return schema.check(value);
  }

  private push(chunk: Uint8Array): void {
    try {
      this.parser.feed(chunk);
    } catch (error) {
      if (!(error instanceof JsonParseError)) throw error;
      // The parser is terminated; the rest of the text is not read.
      this.failure = error;
    }
  }
}

function rootViolation(what: string): SchemaViolation {
  return { path: '$', message: `$: ${what}` };
}

/** False for the answers the check leaves alone (see the top of this file). */
function isChecked(finish: FinishReason | null, refused: boolean, toolCalls: boolean, text: AnswerText): boolean {
  if (finish === 'length' || finish === 'content_filter') return false;
  if (refused) return false;
  return !(toolCalls && text.empty);
}

/** A whole completion's choice 0 against `schema`: null when it holds, or is not checked. */
export function checkCompletionAnswer(schema: CompiledSchema, completion: ChatCompletion, maxBytes: number): SchemaViolation | null {
  const choice = completion.choices[0];
  const text = new AnswerText(maxBytes);
  if (choice === undefined) return text.judge(schema);
  const { content, refusal, tool_calls: toolCalls } = choice.message;
  if (typeof content === 'string') text.feed(content);
  if (!isChecked(choice.finish_reason, typeof refusal === 'string' && refusal !== '', toolCalls.length > 0, text)) return null;
  return text.judge(schema);
}

/**
 * A streamed answer's choice 0, chunk by chunk: its content deltas go into the
 * parser as they come (bounded by `maxBytes`), and the chunk that carries its
 * finish reason gets the verdict. Chunks after that are not read: the chunk
 * relay drops whatever a choice sends after its finish.
 */
export class StreamedAnswerCheck {
  private readonly schema: CompiledSchema;
  private readonly text: AnswerText;
  private refused = false;
  private toolCalls = false;
  /** Choice 0 finished: its verdict was given. */
  finished = false;

  constructor(schema: CompiledSchema, maxBytes: number) {
    this.schema = schema;
    this.text = new AnswerText(maxBytes);
  }

  /** Reads one chunk: the violation when it finished choice 0 with an answer that breaks the schema, else null. */
  push(chunk: ChatCompletionChunk): SchemaViolation | null {
    if (this.finished) return null;
    const choices = chunk.choices;
    for (let i = 0; i < choices.length; i++) {
      const choice = choices[i] as ChatCompletionChunk['choices'][number];
      if (choice.index !== 0) continue;
      const delta = choice.delta;
      if (typeof delta.content === 'string') this.text.feed(delta.content);
      if (typeof delta.refusal === 'string' && delta.refusal !== '') this.refused = true;
      if (delta.tool_calls !== undefined && delta.tool_calls.length > 0) this.toolCalls = true;
      const finish = choice.finish_reason;
      if (finish === null) continue;
      this.finished = true;
      return isChecked(finish, this.refused, this.toolCalls, this.text) ? this.text.judge(this.schema) : null;
    }
    return null;
  }
}
