// The small checker every config section is parsed with: each failure is a
// ConfigError naming the path in the file.
import { ConfigError } from './config.ts';

export type Obj = Record<string, unknown>;

export class Checker {
  readonly source: string | null;
  constructor(source: string | null) {
    this.source = source;
  }

  fail(at: string, problem: string): never {
    throw new ConfigError(this.source, at, problem);
  }

  object(value: unknown, at: string, allowed: readonly string[]): Obj {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) this.fail(at, 'must be an object');
    for (const key of Object.keys(value)) {
      if (!allowed.includes(key)) this.fail(join(at, key), `unknown setting (allowed here: ${allowed.join(', ')})`);
    }
    return value as Obj;
  }

  map(value: unknown, at: string): Obj {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) this.fail(at, 'must be an object');
    return value as Obj;
  }

  string(value: unknown, at: string): string {
    if (typeof value !== 'string' || value.length === 0) this.fail(at, 'must be a non-empty string');
    return value;
  }

  integer(value: unknown, at: string, min: number, max: number): number {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      this.fail(at, `must be an integer from ${min} to ${max}`);
    }
    return value;
  }
}

export function join(at: string, key: string): string {
  return at === '' ? key : `${at}.${key}`;
}
