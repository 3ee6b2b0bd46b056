// The value under construction: the open containers, where each sits in its
// parent, the path an observer or an error names, and the limits on them.
// The token scanner (token-scanner.ts) and the byte loop (parser.ts) extend this
// class, so one parser is one object whose steps are all on prototypes.

import { Buffer } from 'node:buffer';
import { resolveLimit, type JsonObserver, type JsonParserOptions, type JsonPath } from './json-options.ts';
import { JsonParseError, describeByte, type JsonLimitName, type JsonParseErrorCode } from './json-parse-error.ts';

// The byte loop's states (parser.ts switches on them); here because every step
// returns the state that comes next.
export const State = {
  Value: 0,
  FirstValueOrArrayEnd: 1,
  FirstKeyOrObjectEnd: 2,
  Key: 3,
  Colon: 4,
  CommaOrObjectEnd: 5,
  CommaOrArrayEnd: 6,
  String: 7,
  Escape: 8,
  UnicodeEscape: 9,
  NumberMinus: 10,
  NumberZero: 11,
  NumberInteger: 12,
  NumberPoint: 13,
  NumberFraction: 14,
  NumberExponentMark: 15,
  NumberExponentSign: 16,
  NumberExponent: 17,
  Literal: 18,
  Done: 19,
} as const;
export type State = (typeof State)[keyof typeof State];
const STATE_NAMES: readonly string[] = Object.keys(State);

export const EMPTY: Buffer = Buffer.alloc(0);

/** Fields and steps for the containers; the parser extends it. */
export abstract class JsonContainerStack {
  protected readonly maxBytes: number;
  protected readonly maxDepth: number;
  protected readonly maxStringBytes: number;
  protected readonly maxMembers: number;
  protected readonly observer: JsonObserver | undefined;
  protected readonly rejectDuplicateKeys: boolean;

  protected state: State = State.Value;
  protected root: unknown = undefined;

  // The chunk being parsed and the offset of its first byte in the whole input.
  protected buf: Buffer = EMPTY;
  protected base = 0;

  // Open containers, innermost last, and the members each object has seen (an
  // array's length is its count); the innermost one also in `top`.
  protected readonly containers: (Record<string, unknown> | unknown[])[] = [];
  protected readonly memberCounts: number[] = [];
  protected top: Record<string, unknown> | unknown[] | undefined = undefined;
  protected topIsArray = false;
  // The key whose value comes next in the innermost object.
  protected pendingKey = '';
  // For each open container, where it sits in its parent: the key or index
  // (the root's entry is unused). Kept always, one entry per container, so an
  // error can name a path without an observer.
  protected readonly slots: (string | number)[] = [];
  // Path of the value being read; maintained only for an observer.
  protected readonly path: (string | number)[] = [];

  constructor(options: JsonParserOptions = {}) {
    const limits = options.limits;
    this.maxBytes = resolveLimit(limits, 'maxBytes');
    this.maxDepth = resolveLimit(limits, 'maxDepth');
    this.maxStringBytes = resolveLimit(limits, 'maxStringBytes');
    this.maxMembers = resolveLimit(limits, 'maxMembers');
    this.observer = options.observer;
    this.rejectDuplicateKeys = options.rejectDuplicateKeys === true;
  }

  protected fail(code: JsonParseErrorCode, offset: number, problem: string, limit?: JsonLimitName, at?: JsonPath): never {
    const where = `at byte offset ${offset} (parser state ${STATE_NAMES[this.state] as string})`;
    throw new JsonParseError(code, offset, `${problem} ${where}`, limit, at);
  }

  protected failUnexpected(i: number, expected: string): never {
    this.fail('unexpected_byte', this.base + i, `Unexpected byte ${describeByte(this.buf[i] as number)}, expected ${expected},`);
  }

  /** State after a value is complete, whatever holds it. */
  protected afterValue(): State {
    if (this.top === undefined) return State.Done;
    if (this.observer !== undefined) this.path.pop();
    return this.topIsArray ? State.CommaOrArrayEnd : State.CommaOrObjectEnd;
  }

  /** Stores a value in its container, or as the root. */
  protected attach(value: unknown): void {
    const top = this.top;
    if (top === undefined) this.root = value;
    else if (this.topIsArray) (top as unknown[]).push(value);
    else if (this.pendingKey === '__proto__') {
      // Assignment would call the Object.prototype setter and swap the prototype;
      // JSON.parse makes an own data property, and so do we.
      Object.defineProperty(top, '__proto__', { value, writable: true, enumerable: true, configurable: true });
    } else (top as Record<string, unknown>)[this.pendingKey] = value;
  }

  protected completeScalar(value: unknown): State {
    this.attach(value);
    return this.afterValue();
  }

  protected open(container: Record<string, unknown> | unknown[], isArray: boolean): void {
    const top = this.top;
    this.slots.push(top === undefined ? '' : this.topIsArray ? (top as unknown[]).length : this.pendingKey);
    this.attach(container);
    this.containers.push(container);
    this.memberCounts.push(0);
    this.top = container;
    this.topIsArray = isArray;
  }

  protected closeContainer(): State {
    const containers = this.containers;
    containers.pop();
    this.memberCounts.pop();
    this.slots.pop();
    const top = containers[containers.length - 1];
    this.top = top;
    this.topIsArray = Array.isArray(top);
    return this.afterValue();
  }

  /** The path of the value being read (not yet attached to its container). */
  protected currentPath(): (string | number)[] {
    const current = this.slots.slice(1);
    const top = this.top;
    if (top !== undefined) current.push(this.topIsArray ? (top as unknown[]).length : this.pendingKey);
    return current;
  }
}
