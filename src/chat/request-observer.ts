// Early rejection while the body is still arriving: hooks for the streaming
// JSON parser that throw the validator's own error as soon as the bytes make a
// structural fault certain (root not an object, an unknown field, a value of
// the wrong kind, the first entry past a length limit). Role-dependent and
// value rules wait for the whole value; see request-shape.ts for why both
// checkers report the same first fault.
//
// Called for every value of the body: each call is a length test and at most
// MAX_SHAPED_PATH_LENGTH map lookups, and allocates only when it throws.
import type { JsonObserver, JsonPath, JsonValueKind } from '../json/parser.ts';
import { CONTRACT_ONLY, refusedEverywhere, type FieldPolicy } from './request-fields.ts';
import { issueToError } from './request-issues.ts';
import { acceptsKind, isIndexLikeKey, MAX_SHAPED_PATH_LENGTH, REQUEST_SHAPE, shapeAt } from './request-shape.ts';
import { tooManyEntries, unknownField, wrongKind } from './request-structure.ts';

/** One per field policy (one per configuration): it holds no per-request state. */
class ChatRequestObserver implements JsonObserver {
  readonly #policy: FieldPolicy;

  constructor(policy: FieldPolicy) {
    this.#policy = policy;
  }

  key(path: JsonPath, key: string): void {
    if (path.length >= MAX_SHAPED_PATH_LENGTH) return;
    if (path.length === 0) {
      // OpenAI's fields that no model takes: certain from the key alone.
      const refused = refusedEverywhere(key, this.#policy);
      if (refused !== null) throw issueToError(refused);
    }
    const container = shapeAt(path, path.length);
    if (container?.fields === undefined || container.fields.has(key) || isIndexLikeKey(key)) return;
    throw issueToError(unknownField([...path, key]));
  }

  valueStart(path: JsonPath, kind: JsonValueKind): void {
    const depth = path.length;
    if (depth > MAX_SHAPED_PATH_LENGTH) return;
    if (depth === 0) {
      if (!acceptsKind(REQUEST_SHAPE, kind)) throw issueToError(wrongKind([], REQUEST_SHAPE, kind));
      return;
    }
    const parent = shapeAt(path, depth - 1);
    if (parent === undefined) return;
    const last = path[depth - 1] as string | number;
    let own;
    if (typeof last === 'number') {
      own = parent.items;
      if (own === undefined) return;
      // The path is reused by the parser: copy before keeping it in an error.
      if (parent.maxItems !== undefined && last >= parent.maxItems) throw issueToError(tooManyEntries(path.slice(0, -1), parent.maxItems));
    } else {
      own = parent.fields?.get(last);
      if (own === undefined) return;
    }
    if (!acceptsKind(own, kind)) throw issueToError(wrongKind(path.slice(), own, kind));
  }
}

const CONTRACT_ONLY_OBSERVER = Object.freeze(new ChatRequestObserver(CONTRACT_ONLY));

/** The observer for `policy`; make one per configuration and share it among its requests. */
export function createChatRequestObserver(policy: FieldPolicy = CONTRACT_ONLY): JsonObserver {
  return policy === CONTRACT_ONLY ? CONTRACT_ONLY_OBSERVER : Object.freeze(new ChatRequestObserver(policy));
}
