// The names a namespace tool's functions take for an upstream speaking only
// chat completions, which has no namespaces: each becomes a plain function
// whose name maps back to exactly one (namespace, name).
//
// A name is `namespace__name` when that is within OpenAI's function-name rule
// (1 to 64 letters, digits, underscores or hyphens) and free; otherwise the
// function's own name cut short (its allowed characters only) and 10 hex digits
// of the SHA-256 of the pair, with `_2`, `_3`, ... added while that is taken.
// Every plain function name of the request is reserved before any namespaced
// one is made, and each made name is reserved as it is made, so no two
// functions share a name (a collision is impossible by construction, not by
// chance). The names depend only on the request, so the same conversation
// sent again gets the same names.
import { createHash } from 'node:crypto';

/** What a chat function name stands for. */
export interface NamespacedFunction {
  readonly namespace: string;
  readonly name: string;
}

const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX_NAME = 64;
const HASH_DIGITS = 10;
const SEPARATOR = '__';

export class NamespacedNames {
  readonly #taken: Set<string>;
  /** `namespace\0name` -> chat name. */
  readonly #made = new Map<string, string>();
  /** Chat name -> the pair: what the answer's function calls map back through. */
  readonly byChatName = new Map<string, NamespacedFunction>();

  /** `plain`: every function name the request uses without a namespace (tools and earlier calls). */
  constructor(plain: Iterable<string>) {
    this.#taken = new Set(plain);
  }

  /** The chat name of `name` in `namespace`: the same pair always gets the same name. */
  chatName(namespace: string, name: string): string {
    const key = `${namespace}\u0000${name}`;
    const made = this.#made.get(key);
    if (made !== undefined) return made;
    const direct = `${namespace}${SEPARATOR}${name}`;
    const chosen = FUNCTION_NAME.test(direct) && !this.#taken.has(direct) ? direct : this.#hashed(key, name);
    this.#taken.add(chosen);
    this.#made.set(key, chosen);
    this.byChatName.set(chosen, { namespace, name });
    return chosen;
  }

  #hashed(key: string, name: string): string {
    const digest = createHash('sha256').update(key, 'utf8').digest('hex').slice(0, HASH_DIGITS);
    // Room for "_" + digest + a "_NNNNN" counter, within 64.
    const stem = name.replace(/[^a-zA-Z0-9_-]/g, '').slice(0, MAX_NAME - HASH_DIGITS - 7);
    const base = stem === '' ? `fn_${digest}` : `${stem}_${digest}`;
    let candidate = base;
    for (let n = 2; this.#taken.has(candidate); n++) candidate = `${base}_${n}`;
    return candidate;
  }
}
