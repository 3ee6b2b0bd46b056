import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  createEventStreamParser,
  DEFAULT_MAX_EVENT_BYTES,
  EventStreamError,
  type EventStreamEvent,
} from '../../src/sse/event-stream-parser.ts';
import { ownFunctionPaths } from '../support/own-functions.ts';

interface Fixture {
  name: string;
  input: string;
  events: EventStreamEvent[];
  comments?: string[];
}

function message(data: string, id: string | undefined = undefined, event = 'message'): EventStreamEvent {
  return { data, event, id };
}

const fixtures: Fixture[] = [
  { name: 'one event, LF', input: 'data: hello\n\n', events: [message('hello')] },
  { name: 'one event, CRLF', input: 'data: hello\r\n\r\n', events: [message('hello')] },
  { name: 'one event, CR', input: 'data: hello\r\r', events: [message('hello')] },
  {
    name: 'mixed line ends in one stream',
    input: 'data: a\r\ndata: b\rdata: c\n\r\ndata: d\r\r\n',
    events: [message('a\nb\nc'), message('d')],
  },
  { name: 'multi-line data joined with LF', input: 'data: one\ndata: two\ndata: three\n\n', events: [message('one\ntwo\nthree')] },
  { name: 'only one leading space removed', input: 'data:  two spaces\n\n', events: [message(' two spaces')] },
  { name: 'no space after colon', input: 'data:tight\n\n', events: [message('tight')] },
  { name: 'colon inside the value', input: 'data: {"a":"b: c"}\n\n', events: [message('{"a":"b: c"}')] },
  { name: 'empty data line dispatches an empty event', input: 'data:\n\n', events: [message('')] },
  { name: 'field with no colon is a field with empty value', input: 'data\n\n', events: [message('')] },
  { name: 'two empty data lines make one LF', input: 'data\ndata\n\n', events: [message('\n')] },
  { name: 'blank lines without data dispatch nothing', input: '\n\n\r\n\r\r\n', events: [] },
  {
    name: 'comments are surfaced, not dispatched',
    input: ': ping\n\n:no-space\ndata: x\n:  two\n\n',
    events: [message('x')],
    comments: ['ping', 'no-space', ' two'],
  },
  {
    name: 'event type, reset after dispatch',
    input: 'event: add\ndata: 1\n\ndata: 2\n\n',
    events: [message('1', undefined, 'add'), message('2')],
  },
  { name: 'last event type wins', input: 'event: a\nevent: b\ndata: x\n\n', events: [message('x', undefined, 'b')] },
  { name: 'empty event type means message', input: 'event:\ndata: x\n\n', events: [message('x')] },
  { name: 'event type without data is dropped', input: 'event: lonely\n\ndata: x\n\n', events: [message('x')] },
  {
    name: 'id persists across events until set again',
    input: 'id: 7\ndata: a\n\ndata: b\n\nid:\ndata: c\n\n',
    events: [message('a', '7'), message('b', '7'), message('c', '')],
  },
  { name: 'id with NUL is ignored', input: 'id: 1\ndata: a\n\nid: 2\u00003\ndata: b\n\n', events: [message('a', '1'), message('b', '1')] },
  { name: 'retry is ignored', input: 'retry: 1000\ndata: x\n\nretry: soon\n\n', events: [message('x')] },
  { name: 'unknown fields are ignored', input: 'foo: bar\nData: no\ndata: yes\n\n', events: [message('yes')] },
  { name: 'leading BOM stripped', input: '\ufeffdata: x\n\n', events: [message('x')] },
  { name: 'only the first BOM is stripped', input: '\ufeff\ufeffdata: x\n\ndata: y\n\n', events: [message('y')] },
  { name: 'incomplete last event discarded', input: 'data: a\n\ndata: b\n', events: [message('a')] },
  { name: 'unterminated last line discarded', input: 'data: a\n\ndata: b', events: [message('a')] },
  {
    name: 'non-ASCII data',
    input: 'data: héllo — 日本 😀\n\n',
    events: [message('héllo — 日本 😀')],
  },
  {
    name: 'OpenAI-style stream',
    input:
      'data: {"id":"c","choices":[{"delta":{"content":"Hi"}}]}\n\n' +
      ': keep-alive\n\n' +
      'data: {"id":"c","choices":[]}\n\n' +
      'data: [DONE]\n\n',
    events: [message('{"id":"c","choices":[{"delta":{"content":"Hi"}}]}'), message('{"id":"c","choices":[]}'), message('[DONE]')],
    comments: ['keep-alive'],
  },
];

function run(pieces: readonly string[]): { events: EventStreamEvent[]; comments: string[] } {
  const events: EventStreamEvent[] = [];
  const comments: string[] = [];
  const parser = createEventStreamParser({
    onEvent: (event) => events.push(event),
    onComment: (text) => comments.push(text),
  });
  for (const piece of pieces) parser.feed(piece);
  parser.end();
  return { events, comments };
}

describe('createEventStreamParser fixtures', () => {
  for (const fixture of fixtures) {
    const expected = { events: fixture.events, comments: fixture.comments ?? [] };

    test(`${fixture.name}: whole`, () => {
      assert.deepEqual(run([fixture.input]), expected);
    });

    test(`${fixture.name}: character by character`, () => {
      assert.deepEqual(run(Array.from({ length: fixture.input.length }, (_, i) => fixture.input.charAt(i))), expected);
    });

    test(`${fixture.name}: split at every index`, () => {
      for (let i = 0; i <= fixture.input.length; i++) {
        const pieces = [fixture.input.slice(0, i), fixture.input.slice(i)];
        assert.deepEqual(run(pieces), expected, `split at ${i}`);
      }
    });

    test(`${fixture.name}: split at every pair of indexes`, () => {
      const length = fixture.input.length;
      for (let i = 0; i <= length; i++) {
        for (let j = i; j <= length; j++) {
          const pieces = [fixture.input.slice(0, i), fixture.input.slice(i, j), fixture.input.slice(j)];
          assert.deepEqual(run(pieces), expected, `split at ${i} and ${j}`);
        }
      }
    });
  }
});

describe('createEventStreamParser line ends across feeds', () => {
  test('CR then LF in the next feed is one line end, not an empty line', () => {
    const events: EventStreamEvent[] = [];
    const parser = createEventStreamParser({ onEvent: (event) => events.push(event) });
    parser.feed('data: a\r');
    parser.feed('\ndata: b\r');
    parser.feed('\n');
    assert.deepEqual(events, []);
    parser.feed('\r\n');
    assert.deepEqual(events, [message('a\nb')]);
  });

  test('an empty feed between CR and LF keeps the pair together', () => {
    const events: EventStreamEvent[] = [];
    const parser = createEventStreamParser({ onEvent: (event) => events.push(event) });
    parser.feed('data: a\r');
    parser.feed('');
    parser.feed('\ndata: b\n\n');
    assert.deepEqual(events, [message('a\nb')]);
  });

  test('an event is dispatched as soon as its blank line ends, not at the next feed', () => {
    const events: EventStreamEvent[] = [];
    const parser = createEventStreamParser({ onEvent: (event) => events.push(event) });
    parser.feed('data: a\r\r');
    assert.deepEqual(events, [message('a')]);
  });

  test('many lines in one feed are all found', () => {
    const events: EventStreamEvent[] = [];
    const parser = createEventStreamParser({ onEvent: (event) => events.push(event) });
    const count = 1000;
    let input = '';
    for (let i = 0; i < count; i++) input += i % 2 === 0 ? `data: ${i}\n\n` : `data: ${i}\r\n\r\n`;
    parser.feed(input);
    assert.equal(events.length, count);
    assert.deepEqual(events[999], message('999'));
  });
});

describe('createEventStreamParser limits', () => {
  function tooLarge(error: unknown): boolean {
    return error instanceof EventStreamError && error.code === 'sse_event_too_large';
  }

  test('the default limit is 1 MiB', () => {
    assert.equal(DEFAULT_MAX_EVENT_BYTES, 1048576);
  });

  test('a line of exactly the limit passes; one byte more throws', () => {
    // "data: xxxxxxxx" is 14 bytes
    const events: EventStreamEvent[] = [];
    const ok = createEventStreamParser({ onEvent: (event) => events.push(event) }, { maxEventBytes: 14 });
    ok.feed('data: xxxxxxxx\n\n');
    assert.deepEqual(events, [message('xxxxxxxx')]);

    const over = createEventStreamParser({ onEvent: (event) => events.push(event) }, { maxEventBytes: 14 });
    assert.throws(() => over.feed('data: xxxxxxxxx\n\n'), tooLarge);
    assert.equal(events.length, 1);
  });

  test('data lines add up: buffered data plus the current line', () => {
    // line 1: 8 bytes; data buffer "ab\n" = 3; line 2: 3 + 8 = 11
    const events: EventStreamEvent[] = [];
    const ok = createEventStreamParser({ onEvent: (event) => events.push(event) }, { maxEventBytes: 11 });
    ok.feed('data: ab\ndata: cd\n\n');
    assert.deepEqual(events, [message('ab\ncd')]);
    const over = createEventStreamParser({ onEvent: (event) => events.push(event) }, { maxEventBytes: 10 });
    assert.throws(() => over.feed('data: ab\ndata: cd\n\n'), tooLarge);
  });

  test('limit counts UTF-8 bytes, not characters', () => {
    // "data: " + 6 three-byte characters = 24 bytes
    const ok = createEventStreamParser({ onEvent: () => {} }, { maxEventBytes: 24 });
    ok.feed('data: 日本日本日本\n\n');
    const over = createEventStreamParser({ onEvent: () => {} }, { maxEventBytes: 23 });
    assert.throws(() => over.feed('data: 日本日本日本\n\n'), tooLarge);
  });

  test('a surrogate pair counts 4 bytes, whole or cut between feeds', () => {
    // "data: 😀😀" = 6 + 8 = 14 bytes
    const whole = createEventStreamParser({ onEvent: () => {} }, { maxEventBytes: 14 });
    whole.feed('data: 😀😀\n\n');
    const input = 'data: 😀😀\n\n';
    for (let i = 0; i <= input.length; i++) {
      const split = createEventStreamParser({ onEvent: () => {} }, { maxEventBytes: 14 });
      split.feed(input.slice(0, i));
      split.feed(input.slice(i));
      split.end();
      const over = createEventStreamParser({ onEvent: () => {} }, { maxEventBytes: 13 });
      assert.throws(() => {
        over.feed(input.slice(0, i));
        over.feed(input.slice(i));
      }, tooLarge);
    }
  });

  test('many data lines add up to one event', () => {
    const parser = createEventStreamParser({ onEvent: () => {} }, { maxEventBytes: 100 });
    assert.throws(() => {
      for (let i = 0; i < 100; i++) parser.feed('data: 0123456789\n');
    }, tooLarge);
  });

  test('a pending line without a terminator is bounded', () => {
    const parser = createEventStreamParser({ onEvent: () => {} }, { maxEventBytes: 1000 });
    assert.throws(() => {
      for (let i = 0; i < 1000; i++) parser.feed('aaaaaaaaaa');
    }, tooLarge);
  });

  test('a long comment line is bounded too', () => {
    const parser = createEventStreamParser({ onEvent: () => {} }, { maxEventBytes: 10 });
    assert.throws(() => parser.feed(': 0123456789\n'), tooLarge);
  });

  test('keep-alive comments and dispatched events do not accumulate', () => {
    let count = 0;
    const parser = createEventStreamParser({ onEvent: () => count++ }, { maxEventBytes: 16 });
    for (let i = 0; i < 1000; i++) parser.feed(': ping\n\ndata: 0123456789\n\nid: 1\nretry: 5\n');
    assert.equal(count, 1000);
  });

  test('the limit covers the event type buffer', () => {
    // type "0123456789" holds 10; "data: x" adds 2 (12); a 15-byte line makes 27
    const parser = createEventStreamParser({ onEvent: () => {} }, { maxEventBytes: 20 });
    parser.feed('event: 0123456789\ndata: x\n');
    assert.throws(() => parser.feed('data: xxxxxxxxx\n'), tooLarge);
    const withoutType = createEventStreamParser({ onEvent: () => {} }, { maxEventBytes: 20 });
    withoutType.feed('data: x\ndata: xxxxxxxxx\n\n');
  });

  test('a replaced event type is not counted twice', () => {
    const events: EventStreamEvent[] = [];
    const parser = createEventStreamParser({ onEvent: (event) => events.push(event) }, { maxEventBytes: 27 });
    for (let i = 0; i < 10; i++) parser.feed('event: 0123456789\n');
    parser.feed('data: x\n\n');
    assert.deepEqual(events, [message('x', undefined, '0123456789')]);
  });

  test('after a limit error the parser stays terminated', () => {
    const parser = createEventStreamParser({ onEvent: () => {} }, { maxEventBytes: 4 });
    let first: unknown;
    try {
      parser.feed('data: 12345\n');
    } catch (error) {
      first = error;
    }
    assert.ok(tooLarge(first));
    assert.throws(() => parser.feed('\n'), (error) => error === first);
    assert.throws(() => parser.end(), (error) => error === first);
  });

  test('a throwing callback terminates the parser', () => {
    const boom = new Error('boom');
    const parser = createEventStreamParser({
      onEvent: () => {
        throw boom;
      },
    });
    assert.throws(() => parser.feed('data: a\n\ndata: b\n\n'), (error) => error === boom);
    assert.throws(() => parser.feed('data: c\n\n'), (error) => error === boom);
  });

  test('feeding after end throws sse_parser_ended', () => {
    const parser = createEventStreamParser({ onEvent: () => {} });
    parser.end();
    assert.throws(
      () => parser.feed('data: a\n\n'),
      (error) => error instanceof EventStreamError && error.code === 'sse_parser_ended',
    );
    assert.throws(() => parser.end(), (error) => error instanceof EventStreamError && error.code === 'sse_parser_ended');
  });

  test('maxEventBytes must be a positive integer', () => {
    assert.throws(() => createEventStreamParser({ onEvent: () => {} }, { maxEventBytes: 0 }), RangeError);
    assert.throws(() => createEventStreamParser({ onEvent: () => {} }, { maxEventBytes: 1.5 }), RangeError);
  });

  test('a comment without onComment is ignored', () => {
    const events: EventStreamEvent[] = [];
    const parser = createEventStreamParser({ onEvent: (event) => events.push(event) });
    parser.feed(': hi\ndata: x\n\n');
    assert.deepEqual(events, [message('x')]);
  });
});

describe('createEventStreamParser cost', () => {
  test('makes no functions per stream: its steps are shared by every parser', () => {
    const callbacks = { onEvent: (): void => {}, onComment: (): void => {} };
    const first = createEventStreamParser(callbacks);
    const second = createEventStreamParser(callbacks, { maxEventBytes: 64 });
    first.feed('data: a\n\n: keep-alive\nevent: x\ndata: b');
    assert.equal(first.feed, second.feed);
    assert.equal(first.end, second.end);
    assert.deepEqual(ownFunctionPaths(first, [callbacks]), []);
  });
});
