// Loads the runnable examples of docs/clients.md (docs/clients/*.mjs) so the
// tests run exactly the code the page shows. The examples live outside src/
// and test/, so the compiled tests in dist/test/clients find them by walking
// up to the folder that holds docs/clients.md (the sources sit one level
// shallower; both reach the repository root).
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { repositoryRoot } from '../support/repository-root.ts';

export interface SnippetTarget {
  baseURL: string;
  apiKey: string;
  model?: string;
}

export type Snippet = (target: SnippetTarget) => Promise<unknown>;

export { repositoryRoot };

export function snippetPath(file: string): string {
  return path.join(repositoryRoot(), 'docs', 'clients', file);
}

/**
 * The default export of docs/clients/<file>, imported from the copy the test
 * build puts in dist/test/docs/clients/: there the SDKs it imports resolve
 * through dist/test/node_modules (a link to test/node_modules, the test
 * packages); beside docs/ only the root node_modules is visible, which holds
 * none. docs-page.test.ts holds docs/clients/ to the page.
 */
export async function loadSnippet(file: string): Promise<Snippet> {
  const copy = path.join(repositoryRoot(), 'dist', 'test', 'docs', 'clients', file);
  const module = (await import(pathToFileURL(copy).href)) as { default?: unknown };
  if (typeof module.default !== 'function') throw new Error(`docs/clients/${file} has no default export function`);
  return module.default as Snippet;
}

/** The demo provider's reply to a last user message (src/providers/demo-reply.ts, rule 3). */
export function demoEcho(text: string, messages: number): string {
  return `Portcullis demo provider (not a language model). You said: "${text}". The request had ${messages} ${messages === 1 ? 'message' : 'messages'}.`;
}

/** The demo provider's reply after a tool result (rule 2). */
export function demoToolEcho(result: string, messages: number): string {
  return `Portcullis demo provider (not a language model). The tool returned: "${result}". The request had ${messages} messages.`;
}
