// The structural pass of the validator: the request skeleton (request-shape.ts)
// walked over an already-parsed value, in the order the streaming observer
// meets the same faults in the bytes. Its issues are exactly the ones the
// observer can raise early; the three constructors below are shared with it.
// It runs only for a body the validator's walk found at fault. The fields no
// model takes (the field policy's) are faults the bytes make certain too.
import type { JsonValueKind } from '../json/parser.ts';
import { CONTRACT_ONLY, refusedEverywhere, type FieldPolicy } from './request-fields.ts';
import { createIssue, type IssuePath, type RequestIssue } from './request-issues.ts';
import { acceptsKind, isIndexLikeKey, isJsonObject, jsonKindOf, REQUEST_SHAPE, type ValueShape } from './request-shape.ts';

export function unknownField(path: IssuePath): RequestIssue {
  return createIssue(path, { code: 'unknown_parameter' });
}

export function wrongKind(path: IssuePath, s: ValueShape, received: JsonValueKind | undefined): RequestIssue {
  return createIssue(path, { code: 'invalid_type', expected: s.expected, received: received ?? 'non-JSON value' });
}

export function tooManyEntries(arrayPath: IssuePath, maximum: number): RequestIssue {
  return createIssue(arrayPath, { code: 'array_above_max_length', maximum });
}

/**
 * Every structural issue of `root`, in document order. An array is walked up
 * to its limit and the overflow reported after that, where the observer sees
 * it. Recursion follows the skeleton, never the data, so its depth is fixed.
 */
export function collectStructuralIssues(root: unknown, policy: FieldPolicy = CONTRACT_ONLY): RequestIssue[] {
  const issues: RequestIssue[] = [];
  const path: (string | number)[] = [];

  const walk = (value: unknown, s: ValueShape): void => {
    const kind = jsonKindOf(value);
    if (kind === undefined || !acceptsKind(s, kind)) {
      issues.push(wrongKind(path.slice(), s, kind));
      return;
    }
    if (s.fields !== undefined && isJsonObject(value)) {
      const object = value;
      for (const key of Object.keys(object)) {
        // At the root: OpenAI's fields that no model takes (request-fields.ts).
        const refused = path.length === 0 ? refusedEverywhere(key, policy) : null;
        if (refused !== null) {
          if (object[key] !== undefined) issues.push(refused);
          continue;
        }
        const child = s.fields.get(key);
        if (child === undefined) {
          if (!isIndexLikeKey(key)) issues.push(unknownField([...path, key]));
          continue;
        }
        // An own property holding undefined is absent, as JSON.stringify would have it.
        if (object[key] === undefined) continue;
        path.push(key);
        walk(object[key], child);
        path.pop();
      }
    } else if (s.items !== undefined && Array.isArray(value)) {
      const array: readonly unknown[] = value;
      const limit = s.maxItems === undefined ? array.length : Math.min(array.length, s.maxItems);
      for (let i = 0; i < limit; i++) {
        path.push(i);
        walk(array[i], s.items);
        path.pop();
      }
      if (array.length > limit) issues.push(tooManyEntries(path.slice(), limit));
    }
  };

  walk(root, REQUEST_SHAPE);
  return issues;
}
