// The requests real Responses clients sent, as captured in
// test/fixtures/responses/ (see its README): read from the sources, also when
// the tests run compiled from dist/ (fixture files are not copied).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { repositoryRoot } from '../support/repository-root.ts';

export interface CapturedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Record<string, unknown>;
}

const FOLDER = path.join(repositoryRoot(), 'test', 'fixtures', 'responses');

export function capturedRequest(name: string): CapturedRequest {
  return JSON.parse(readFileSync(path.join(FOLDER, name), 'utf8')) as CapturedRequest;
}

/** Every captured request's file name. */
export function capturedRequestNames(): string[] {
  return readdirSync(FOLDER)
    .filter((name) => name.endsWith('.json'))
    .sort();
}
