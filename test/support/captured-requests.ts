// The requests real clients sent, as captured in a folder of test/fixtures/
// (messages/, responses/; each has a README saying how): read from the
// sources, also when the tests run compiled from dist/ (fixture files are not
// copied).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { repositoryRoot } from './repository-root.ts';

export interface CapturedRequest {
  readonly method: string;
  /** With its query string, such as /v1/messages?beta=true. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Record<string, unknown>;
}

export interface CapturedRequests {
  capturedRequest(name: string): CapturedRequest;
  /** Every captured request's file name, sorted. */
  capturedRequestNames(): string[];
}

/** The captured requests of test/fixtures/<folder>/. */
export function capturedRequestsIn(folder: string): CapturedRequests {
  const dir = path.join(repositoryRoot(), 'test', 'fixtures', folder);
  return {
    capturedRequest: (name) => JSON.parse(readFileSync(path.join(dir, name), 'utf8')) as CapturedRequest,
    capturedRequestNames: () =>
      readdirSync(dir)
        .filter((name) => name.endsWith('.json'))
        .sort(),
  };
}
