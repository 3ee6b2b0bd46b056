// The small checker every config section is parsed with. It never throws: each
// problem is recorded as an issue naming its path, and the check returns
// undefined so the caller keeps a default and goes on to the next setting.
// parseConfig throws one ConfigError holding every issue at the end.
import { didYouMean, issueMessage, type ConfigIssue, type IssueDetail } from './config-issues.ts';

export type Obj = Record<string, unknown>;

export class Checker {
  readonly source: string | null;
  readonly issues: ConfigIssue[] = [];
  constructor(source: string | null) {
    this.source = source;
  }

  report(at: string, detail: IssueDetail): undefined {
    this.issues.push({ code: detail.code, path: at, message: issueMessage(detail) });
    return undefined;
  }

  /** An object whose keys are all in `allowed`; an unknown key is an issue, and the known ones are still checked. */
  object(value: unknown, at: string, allowed: readonly string[]): Obj | undefined {
    if (!isObject(value)) return this.report(at, { code: 'not_object' });
    for (const key of Object.keys(value)) {
      if (!allowed.includes(key)) this.report(join(at, key), { code: 'unknown_setting', allowed, suggestion: didYouMean(key, allowed) });
    }
    return value;
  }

  /** An object of user-chosen names (providers, aliases, headers). */
  map(value: unknown, at: string): Obj | undefined {
    return isObject(value) ? value : this.report(at, { code: 'not_object' });
  }

  string(value: unknown, at: string): string | undefined {
    return typeof value === 'string' && value.length > 0 ? value : this.report(at, { code: 'not_string' });
  }

  integer(value: unknown, at: string, min: number, max: number): number | undefined {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      return this.report(at, { code: 'not_integer', min, max });
    }
    return value;
  }

  boolean(value: unknown, at: string): boolean | undefined {
    return typeof value === 'boolean' ? value : this.report(at, { code: 'not_boolean' });
  }

  oneOf<T extends string>(value: unknown, at: string, options: readonly T[]): T | undefined {
    return options.includes(value as T) ? (value as T) : this.report(at, { code: 'not_one_of', options });
  }

  /** `o[key]` checked by `check` when it is set; `fallback` when it is not set or is wrong. */
  optional<T>(o: Obj, key: string, at: string, fallback: T, check: (value: unknown, at: string) => T | undefined): T {
    if (o[key] === undefined) return fallback;
    return check(o[key], join(at, key)) ?? fallback;
  }

  /** Shorthand for an optional integer setting. */
  int(o: Obj, key: string, at: string, fallback: number, min: number, max: number): number {
    return this.optional(o, key, at, fallback, (v, vat) => this.integer(v, vat, min, max));
  }
}

export function join(at: string, key: string): string {
  return at === '' ? key : `${at}.${key}`;
}

function isObject(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
