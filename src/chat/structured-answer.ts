// The answer to a request with response_format json_schema and strict true,
// held to its schema: the content of choice 0 parsed with the gateway's own
// bounded JSON parser (../json/), then checked by the compiled schema
// (../schema/compile.ts). Pure: a whole completion is judged at once
// (checkCompletionAnswer); a stream chunk by chunk (StreamedAnswerCheck), its
// content gathered as it arrives and judged when the chunk with choice 0's
// finish reason comes.
//
// What is not checked, and why (the openai SDK's parse() is the measure: the
// gateway checks at least every answer it would parse):
// - finish_reason `length` or `content_filter`: the answer is cut or withheld
//   and says so; parse() throws LengthFinishReasonError or
//   ContentFilterFinishReasonError on it, and another target would cut at the
//   same max_tokens;
// - a `refusal` with no content: the model declined, and the refusal takes
//   the content's place (parse() leaves `parsed` null). Content beside a
//   refusal is checked: not every client looks at the refusal first;
// - tool calls with no content: the model called a tool instead of answering
//   (parse() leaves `parsed` null). Content beside tool calls is checked.
// Anything else must be a JSON value that the schema accepts: no content at
// all, or text that is not JSON, fails at `$`. The request asked for one
// choice (n is 1): an answer with a choice of another index fails too, since
// SDKs read the first entry of `choices` whatever its index, and a stream may
// not finish through another choice.

import { JsonParseError, parseJson } from '../json/parser.ts';
import type { CompiledSchema, SchemaViolation } from '../schema/compile.ts';
import type { ChatCompletion, ChatCompletionChunk, FinishReason } from './types.ts';

export type { SchemaViolation } from '../schema/compile.ts';

/**
 * The answer's text, gathered until the verdict and parsed once then: a
 * parse per delta would cost several times the rest of a chunk's relay. Joined
 * as the client joins the deltas (a surrogate pair split across two stays one
 * character). Bounded: past `maxBytes` characters it is surely past `maxBytes`
 * bytes, and is dropped; a text under that in characters but over in bytes
 * fails in the parser.
 */
class AnswerText {
  private readonly maxBytes: number;
  private text = '';
  private tooLong = false;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /** True while no text came. */
  get empty(): boolean {
    return this.text.length === 0 && !this.tooLong;
  }

  feed(piece: string): void {
    if (this.tooLong) return;
    if (this.text.length + piece.length > this.maxBytes) {
      this.tooLong = true;
      this.text = '';
      return;
    }
    this.text += piece;
  }

  /** The schema's verdict on the whole text. */
  judge(schema: CompiledSchema): SchemaViolation | null {
    if (this.tooLong) return this.tooLongViolation();
    if (this.text.length === 0) return rootViolation('expected a JSON value, got no content');
    let value: unknown;
    try {
      value = parseJson(this.text, { limits: { maxBytes: this.maxBytes } });
    } catch (error) {
      if (!(error instanceof JsonParseError)) throw error;
      if (error.limit === 'maxBytes') return this.tooLongViolation();
      // The parser's code and offset, never its text: the answer is not quoted.
      return rootViolation(`expected a JSON value, got text that is not JSON (${error.code} at byte ${error.offset})`);
    }
    return schema.check(value);
  }

  private tooLongViolation(): SchemaViolation {
    return rootViolation(`the answer is longer than the ${this.maxBytes} bytes the gateway checks`);
  }
}

function rootViolation(what: string): SchemaViolation {
  return { path: '$', message: `$: ${what}` };
}

/** False for the answers the check leaves alone (see the top of this file). */
function isChecked(finish: FinishReason | null, refused: boolean, toolCalls: boolean, text: AnswerText): boolean {
  if (finish === 'length' || finish === 'content_filter') return false;
  // A refusal or tool calls stand in for the answer only when there is no content: content beside them is what a client parses.
  return !((refused || toolCalls) && text.empty);
}

/** An answer of more than the one choice asked for: what the client would read is not what was checked. */
function otherChoice(index: number): SchemaViolation {
  return rootViolation(`the answer has a choice of index ${index}; the request asked for one choice, index 0`);
}

/** A whole completion's choice 0 against `schema`: null when it holds, or is not checked. */
export function checkCompletionAnswer(schema: CompiledSchema, completion: ChatCompletion, maxBytes: number): SchemaViolation | null {
  for (const other of completion.choices) if (other.index !== 0) return otherChoice(other.index);
  if (completion.choices.length > 1) return rootViolation(`the answer has ${completion.choices.length} choices; the request asked for one`);
  const choice = completion.choices[0];
  const text = new AnswerText(maxBytes);
  if (choice === undefined) return text.judge(schema);
  const { content, refusal, tool_calls: toolCalls } = choice.message;
  if (typeof content === 'string') text.feed(content);
  if (!isChecked(choice.finish_reason, typeof refusal === 'string' && refusal !== '', toolCalls.length > 0, text)) return null;
  return text.judge(schema);
}

/**
 * A streamed answer's choice 0, chunk by chunk: its content deltas are
 * gathered as they come (bounded by `maxBytes`), and the chunk that carries
 * its finish reason gets the verdict. Chunks after that are not read: the chunk
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
      if (choice.index !== 0) {
        this.finished = true;
        return otherChoice(choice.index);
      }
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
