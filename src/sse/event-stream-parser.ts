// A pure parser of the `text/event-stream` format: text in, events out.
// Spec: https://html.spec.whatwg.org/multipage/server-sent-events.html#parsing-an-event-stream
//
// It knows nothing about bytes, sockets or fetch: UTF-8 decoding across network
// chunks lives in the exchange's read loop (../upstream/upstream-stream.ts). Input arrives
// as arbitrary slices of the decoded text (a line, a CRLF pair or a surrogate pair may be cut anywhere),
// and every character is looked at a bounded number of times: lines are found
// with indexOf from remembered positions, never by re-scanning what was seen.

/** One dispatched event. */
export interface EventStreamEvent {
  /** The data lines of the event joined with "\n". */
  data: string;
  /** The `event:` field, or "message" when the event had none (spec step 5–6). */
  event: string;
  /** The last event ID buffer at dispatch time; per the spec it persists across
   * events until the stream sets it again. `undefined` until an `id:` field. */
  id: string | undefined;
}

interface EventStreamCallbacks {
  onEvent(event: EventStreamEvent): void;
  /** A comment line (`:` first), without the colon and one leading space. */
  onComment?(text: string): void;
}

interface EventStreamParserOptions {
  /** Most UTF-8 bytes one event may hold: its data buffer (values and the LF
   * after each) and event type, plus the whole line being read (field name,
   * colon and value; not its terminator). Comments and ignored fields count
   * only while they are the line being read. Default 1 MiB. */
  maxEventBytes?: number;
}

interface EventStreamParser {
  /** Parse the next slice of decoded text. Throws EventStreamError. */
  feed(text: string): void;
  /** End of the stream: an event not closed by a blank line is discarded, as the
   * spec requires. Further feeds throw. */
  end(): void;
}

export const DEFAULT_MAX_EVENT_BYTES = 1024 * 1024;

type EventStreamErrorCode = 'sse_event_too_large' | 'sse_parser_ended';

/** A limit crossed or a parser used after it stopped; `code` is stable. */
export class EventStreamError extends Error {
  override name = 'EventStreamError';
  readonly code: EventStreamErrorCode;
  constructor(code: EventStreamErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

const State = {
  /** Reading lines. */
  Open: 'open',
  /** end() was called. */
  Ended: 'ended',
  /** A limit was crossed or a callback threw; every later call rethrows. */
  Failed: 'failed',
} as const;
type State = (typeof State)[keyof typeof State];

const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const BOM = 0xfeff;
const HIGH_SURROGATE_FIRST = 0xd800;
const HIGH_SURROGATE_LAST = 0xdbff;
const NOT_FOUND = -1;

export function createEventStreamParser(
  callbacks: EventStreamCallbacks,
  options: EventStreamParserOptions = {},
): EventStreamParser {
  return new EventStreamTextParser(callbacks, options);
}

/** The parser's buffers live in fields and its steps on the prototype: a
 * stream makes this one object and no functions. */
export class EventStreamTextParser implements EventStreamParser {
  private readonly callbacks: EventStreamCallbacks;
  private readonly maxEventBytes: number;

  private state: State = State.Open;
  private failure: unknown = undefined;

  // "When a stream is parsed, a data buffer, an event type buffer, and a last
  // event ID buffer must be associated with it. They must be initialized to the
  // empty string." The ID buffer starts as undefined so a consumer can tell
  // "never set" from "set to empty".
  private dataBuffer = '';
  private eventTypeBuffer = '';
  private lastEventIdBuffer: string | undefined = undefined;
  /** UTF-8 bytes held by dataBuffer and eventTypeBuffer. */
  private eventBytes = 0;
  private eventTypeBytes = 0;

  /** The start of a line not yet terminated, kept across feeds. */
  private pendingLine = '';
  private pendingBytes = 0;
  /** The previous feed ended with CR: an LF opening this feed is the CRLF's
   * second half, not an empty line. */
  private skipLeadingLf = false;
  /** No text seen yet: a leading BOM is still to be stripped. */
  private atStreamStart = true;

  constructor(callbacks: EventStreamCallbacks, options: EventStreamParserOptions = {}) {
    const maxEventBytes = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
    if (!Number.isSafeInteger(maxEventBytes) || maxEventBytes <= 0) {
      throw new RangeError('maxEventBytes must be a positive integer');
    }
    this.callbacks = callbacks;
    this.maxEventBytes = maxEventBytes;
  }

  feed(text: string): void {
    this.guardOpen();
    try {
      this.scan(text);
    } catch (error) {
      this.state = State.Failed;
      this.failure = error;
      throw error;
    }
  }

  end(): void {
    this.guardOpen();
    this.state = State.Ended;
    // "Once the end of the file is reached, any pending data must be discarded.
    // (If the file ends in the middle of an event, before the final empty line,
    // the incomplete event is not dispatched.)"
    this.dataBuffer = '';
    this.eventTypeBuffer = '';
    this.pendingLine = '';
  }

  private guardOpen(): void {
    if (this.state === State.Failed) throw this.failure;
    if (this.state === State.Ended) {
      throw new EventStreamError('sse_parser_ended', 'The event stream parser has already ended.');
    }
  }

  private scan(text: string): void {
    let position = 0;
    const length = text.length;
    if (length === 0) return;

    if (this.atStreamStart) {
      this.atStreamStart = false;
      // stream = [ bom ] *event — the UTF-8 decode algorithm strips one BOM.
      if (text.charCodeAt(0) === BOM) position = 1;
    }
    if (this.skipLeadingLf && position < length) {
      this.skipLeadingLf = false;
      if (text.charCodeAt(position) === LF) position++;
    }

    // Next CR and LF at or after `position`, each searched again only once the
    // scan has passed it, so no character is searched twice.
    let nextCr = text.indexOf('\r', position);
    let nextLf = text.indexOf('\n', position);

    while (position < length) {
      if (nextCr !== NOT_FOUND && nextCr < position) nextCr = text.indexOf('\r', position);
      if (nextLf !== NOT_FOUND && nextLf < position) nextLf = text.indexOf('\n', position);

      // "...a CRLF character pair, a single LF not preceded by a CR, and a single
      // CR not followed by an LF being the ways in which a line can end."
      let lineEnd: number;
      if (nextCr === NOT_FOUND) lineEnd = nextLf;
      else if (nextLf === NOT_FOUND) lineEnd = nextCr;
      else lineEnd = nextCr < nextLf ? nextCr : nextLf;

      if (lineEnd === NOT_FOUND) {
        this.holdPartialLine(text, position, length);
        return;
      }

      let line = text.slice(position, lineEnd);
      let lineBytes = utf8ByteLength(line);
      if (this.pendingLine.length > 0) {
        line = this.pendingLine + line;
        lineBytes += this.pendingBytes;
        this.pendingLine = '';
        this.pendingBytes = 0;
      }
      this.checkEventSize(lineBytes);

      position = lineEnd + 1;
      if (text.charCodeAt(lineEnd) === CR) {
        if (position < length) {
          if (text.charCodeAt(position) === LF) position++;
        } else {
          this.skipLeadingLf = true;
        }
      }
      this.processLine(line, lineBytes);
    }
  }

  private holdPartialLine(text: string, from: number, to: number): void {
    const rest = from === 0 ? text : text.slice(from, to);
    this.pendingBytes += utf8ByteLength(rest);
    this.checkEventSize(this.pendingBytes);
    this.pendingLine = this.pendingLine.length === 0 ? rest : this.pendingLine + rest;
  }

  /** The event being built plus `lineBytes` must stay within the limit. */
  private checkEventSize(lineBytes: number): void {
    if (this.eventBytes + lineBytes > this.maxEventBytes) {
      throw new EventStreamError(
        'sse_event_too_large',
        `An event-stream event exceeds the limit of ${this.maxEventBytes} bytes.`,
      );
    }
  }

  // "Lines must be processed, in the order they are received, as follows:"
  // `lineBytes` is the line's UTF-8 length; field names that matter are ASCII,
  // so a value's byte length is lineBytes minus the index where it starts.
  private processLine(line: string, lineBytes: number): void {
    // "If the line is empty (a blank line): Dispatch the event, as defined below."
    if (line.length === 0) {
      this.dispatchEvent();
      return;
    }
    const colon = line.indexOf(':');
    // "If the line starts with a U+003A COLON character (:): Ignore the line."
    // (Comments are surfaced so a consumer can see keep-alives.)
    if (colon === 0) {
      if (this.callbacks.onComment !== undefined) {
        this.callbacks.onComment(line.charCodeAt(1) === SPACE ? line.slice(2) : line.slice(1));
      }
      return;
    }
    // "If the line contains a U+003A COLON character (:): Collect the characters
    // on the line before the first U+003A COLON character (:), and let field be
    // that string. Collect the characters on the line after the first U+003A
    // COLON character (:), and let value be that string. If value starts with a
    // U+0020 SPACE character, remove it from value."
    if (colon !== NOT_FOUND) {
      const valueStart = line.charCodeAt(colon + 1) === SPACE ? colon + 2 : colon + 1;
      this.processField(line.slice(0, colon), line.slice(valueStart), lineBytes - valueStart);
      return;
    }
    // "Otherwise, the string is not empty but does not contain a U+003A COLON
    // character (:): Process the field using the steps described below, using
    // the whole line as the field name, and the empty string as the field value."
    this.processField(line, '', 0);
  }

  // "Field names must be compared literally, with no case folding performed."
  private processField(field: string, value: string, valueBytes: number): void {
    switch (field) {
      case 'event':
        // "Set the event type buffer to field value."
        this.eventBytes += valueBytes - this.eventTypeBytes;
        this.eventTypeBuffer = value;
        this.eventTypeBytes = valueBytes;
        return;
      case 'data':
        // "Append the field value to the data buffer, then append a single
        // U+000A LINE FEED (LF) character to the data buffer."
        this.dataBuffer = this.dataBuffer + value + '\n';
        this.eventBytes += valueBytes + 1;
        return;
      case 'id':
        // "If the field value does not contain U+0000 NULL, then set the last
        // event ID buffer to the field value. Otherwise, ignore the field."
        if (value.indexOf('\u0000') === NOT_FOUND) this.lastEventIdBuffer = value;
        return;
      default:
        // "retry": sets a reconnection time, which only a reconnecting client
        // needs; this parser serves one request. "Otherwise: The field is ignored."
        return;
    }
  }

  // "When the user agent is required to dispatch the event..."
  private dispatchEvent(): void {
    const dataBuffer = this.dataBuffer;
    // "2. If the data buffer is an empty string, set the data buffer and the
    // event type buffer to the empty string and return."
    if (dataBuffer.length === 0) {
      this.eventTypeBuffer = '';
      this.eventTypeBytes = 0;
      this.eventBytes = 0;
      return;
    }
    // "3. If the data buffer's last character is a U+000A LINE FEED (LF)
    // character, then remove the last character from the data buffer."
    const data = dataBuffer.charCodeAt(dataBuffer.length - 1) === LF ? dataBuffer.slice(0, -1) : dataBuffer;
    // "5. Initialize event's type attribute to "message" ... 6. If the event type
    // buffer has a value other than the empty string, change the type of the
    // newly created event to equal the value of the event type buffer."
    const event = this.eventTypeBuffer.length === 0 ? 'message' : this.eventTypeBuffer;
    // "7. Set the data buffer and the event type buffer to the empty string."
    this.dataBuffer = '';
    this.eventTypeBuffer = '';
    this.eventTypeBytes = 0;
    this.eventBytes = 0;
    this.callbacks.onEvent({ data, event, id: this.lastEventIdBuffer });
  }
}

/** UTF-8 length of a string. A high surrogate counts 1 and a low surrogate 3,
 * so a pair counts its 4 bytes even when a feed boundary cuts it in two (the
 * parts are counted in different feeds); a lone high surrogate, which a
 * TextDecoder never produces, is under-counted by 2. */
function utf8ByteLength(text: string): number {
  let bytes = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= HIGH_SURROGATE_FIRST && code <= HIGH_SURROGATE_LAST) bytes += 1;
    else bytes += 3;
  }
  return bytes;
}
