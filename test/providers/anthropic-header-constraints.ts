// Anthropic's rules for the version and beta headers, as the strict fake
// Anthropic upstreams hold a request's headers to them: an anthropic-beta
// value Anthropic does not know is refused ("Unsupported beta header: NAME",
// the wording of Anthropic's beta-headers page), and so is an
// anthropic-version that is missing or not a version date (the fake's own
// wording). The known betas are those @anthropic-ai/sdk 1.14 names
// (AnthropicBeta) and those Claude Code 2.1.328 sends.
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { DOCUMENTED_BETAS } from '../support/anthropic-messages-constraints.ts';
import { anthropicInvalidRequest } from './anthropic-constraints.ts';

export const KNOWN_BETAS: ReadonlySet<string> = new Set([
  // Documented, and sent by the pinned clients (Claude Code 2.1.328 sends all of its list).
  ...DOCUMENTED_BETAS,
  // @anthropic-ai/sdk 1.14, resources/beta/beta.d.ts (those of the Messages API).
  'code-execution-2025-05-22',
  'compact-2026-01-12',
  'computer-use-2025-01-24',
  'computer-use-2025-11-24',
  'context-1m-2025-08-07',
  'context-management-2025-06-27',
  'extended-cache-ttl-2025-04-11',
  'files-api-2025-04-14',
  'interleaved-thinking-2025-05-14',
  'mcp-client-2025-11-20',
  'model-context-window-exceeded-2025-08-26',
  'output-128k-2025-02-19',
  'pdfs-2024-09-25',
  'prompt-caching-2024-07-31',
  'skills-2025-10-02',
  'structured-outputs-2025-11-13',
  'token-counting-2024-11-01',
  'token-efficient-tools-2025-02-19',
]);

const VERSION = /^\d{4}-\d{2}-\d{2}$/;

/** What Anthropic says about `headers`, or undefined when it takes them. */
export function anthropicHeaderViolation(headers: IncomingHttpHeaders): string | undefined {
  const version = headers['anthropic-version'];
  if (typeof version !== 'string' || !VERSION.test(version)) return 'anthropic-version: header is required and must be a version date';
  const beta = headers['anthropic-beta'];
  if (beta === undefined) return undefined;
  for (const value of (Array.isArray(beta) ? beta.join(',') : beta).split(',')) {
    const name = value.trim();
    if (!KNOWN_BETAS.has(name)) return `Unsupported beta header: ${name}`;
  }
  return undefined;
}

/** For a fake upstream: answers 400 as Anthropic does and returns true when the headers break a rule. */
export function refuseHeadersLikeAnthropic(res: ServerResponse, headers: IncomingHttpHeaders): boolean {
  const violation = anthropicHeaderViolation(headers);
  if (violation === undefined) return false;
  const text = JSON.stringify(anthropicInvalidRequest(violation));
  res.writeHead(400, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
  return true;
}
