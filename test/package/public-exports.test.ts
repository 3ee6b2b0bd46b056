// Every public type declared in src/api/ is exported from the package's entry
// (src/index.ts): a type a host meets in a signature it cannot name is a type
// it cannot write down. And the 'request' record's public type is the access
// line the gateway writes, checked at compile time both ways.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { RequestLogFields } from '../../src/api/ports.ts';
import type { AccessLine } from '../../src/log/access-line.ts';
import { REQUEST_RECORD_FIELDS } from '../../src/testing/logger-contract.ts';
import { repositoryRoot } from '../support/repository-root.ts';

/** Compiles only when `From` is assignable to `To`. */
type Assignable<From extends To, To> = [From, To];
export type RequestRecordChecks = [Assignable<AccessLine, RequestLogFields>, Assignable<RequestLogFields, AccessLine>];

const root = repositoryRoot();

/** The names a file declares with `export interface` or `export type`, in order. */
export function declaredTypes(text: string): string[] {
  return [...text.matchAll(/^export (?:interface|type) ([A-Za-z_$][\w$]*)/gm)].map((match) => match[1] as string);
}

/** The names src/index.ts exports from `specifier` (in `export type { ... } from` and `export { ... } from`). */
export function exportedFrom(text: string, specifier: string): string[] {
  const names: string[] = [];
  for (const match of text.matchAll(/^export (?:type )?\{([^}]*)\} from '([^']+)';/gm)) {
    if (match[2] !== specifier) continue;
    for (const part of (match[1] as string).split(',')) {
      const name = part.trim().replace(/^type /, '').split(/\s+as\s+/).at(-1);
      if (name !== undefined && name !== '') names.push(name);
    }
  }
  return names;
}

describe('the public exports', () => {
  test('every type and interface of src/api/*.ts is exported from src/index.ts', () => {
    const index = readFileSync(path.join(root, 'src/index.ts'), 'utf8');
    const apiFiles = readdirSync(path.join(root, 'src/api')).filter((name) => name.endsWith('.ts')).sort();
    assert.ok(apiFiles.length >= 4, apiFiles.join(' '));
    const missing: string[] = [];
    for (const file of apiFiles) {
      const exported = new Set(exportedFrom(index, `./api/${file}`));
      for (const name of declaredTypes(readFileSync(path.join(root, 'src/api', file), 'utf8'))) {
        if (!exported.has(name)) missing.push(`${name} (src/api/${file})`);
      }
    }
    assert.deepEqual(missing, [], 'add these to src/index.ts (export type { ... })');
  });

  test("REQUEST_RECORD_FIELDS names exactly RequestLogFields' fields", () => {
    // Typed as RequestLogFields, the literal must name every field the type has.
    const record: RequestLogFields = {
      requestId: 'req_1', method: null, path: null, client: null, status: null, keyId: null, alias: null, target: null, route: null,
      stream: null, promptTokens: null, completionTokens: null, charge: null, chargedTokens: null, costNanos: null, cost: null,
      ttfbMs: null, totalMs: null, completed: false, error: null,
    };
    assert.deepEqual(Object.keys(record).sort(), [...REQUEST_RECORD_FIELDS].sort());
  });

  test('the readers see both declaration forms and multi-line export lists', () => {
    assert.deepEqual(declaredTypes('export interface A {}\nexport type B = string;\nexport const c = 1;\ninterface D {}\n'), ['A', 'B']);
    const index = "export type {\n  A,\n  B,\n} from './api/x.ts';\nexport { c, type D } from './api/x.ts';\nexport type { E } from './api/y.ts';\n";
    assert.deepEqual(exportedFrom(index, './api/x.ts'), ['A', 'B', 'c', 'D']);
    assert.deepEqual(exportedFrom(index, './api/y.ts'), ['E']);
  });
});
