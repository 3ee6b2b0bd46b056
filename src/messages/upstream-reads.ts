// What an Anthropic upstream reads on a request's behalf beyond the body:
// documents it fetches by URL or loads by file id, and the results of the
// server tools it runs (searches, fetches, code execution, ...). Anthropic
// bills those as input tokens, so the translation's prompt bound
// (./message-to-chat.ts) adds these bounds and the reservation covers them.
// The rule, with its numbers: docs/messages-translation.md, "The prompt bound
// of the translation". Pure.
import { PDF_PAGE_TOKENS } from './token-estimate.ts';

/** Anthropic reads at most 100 pages of one PDF ("Claude requires PDF documents to be a
 * maximum of 100 pages per request"); a larger one is refused. */
export const DOCUMENT_MAX_PAGES = 100;
/** A document by URL or file id: its pages are not known here, so the most Anthropic reads of
 * one (300,000 tokens: more than a 200k-token context window holds). */
export const DOCUMENT_READ_TOKENS = DOCUMENT_MAX_PAGES * PDF_PAGE_TOKENS;
/** Uses counted for a server tool without `max_uses`: Anthropic runs its server tool loop
 * for at most 10 iterations before it answers with stop_reason pause_turn (a client wanting
 * a firm bound for parallel uses sets max_uses). */
export const SERVER_TOOL_DEFAULT_USES = 10;
/** A larger `max_uses` is counted as this many: the bound stays a safe integer (the
 * reservation clamps far below it anyway). */
const SERVER_TOOL_MAX_COUNTED_USES = 10_000;
/** One use of a server tool: a search's results (about ten results with their page
 * excerpts, a few thousand tokens), a code execution's output, a screenshot (at most about
 * 1,600 tokens): 20,000 errs towards counting more. */
export const SERVER_TOOL_USE_TOKENS = 20_000;

type JsonObject = Record<string, unknown>;

function positiveInteger(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : null;
}

/** Tokens Anthropic may read for a block beside its JSON: a document by URL or file id. */
export function blockReadTokens(block: JsonObject): number {
  if (block['type'] !== 'document') return 0;
  const source = block['source'];
  if (typeof source !== 'object' || source === null) return 0;
  const type = (source as JsonObject)['type'];
  return type === 'url' || type === 'file' ? DOCUMENT_READ_TOKENS : 0;
}

/**
 * Tokens Anthropic may read running a server tool: its uses (`max_uses`, else
 * SERVER_TOOL_DEFAULT_USES) times one use's bound (web_fetch's
 * `max_content_tokens` when given, else a whole document for web_fetch, which
 * fetches PDFs too, and SERVER_TOOL_USE_TOKENS for any other).
 */
export function serverToolReadTokens(tool: JsonObject): number {
  const uses = Math.min(positiveInteger(tool['max_uses']) ?? SERVER_TOOL_DEFAULT_USES, SERVER_TOOL_MAX_COUNTED_USES);
  const type = String(tool['type']);
  const fetch = type === 'web_fetch' || type.startsWith('web_fetch_');
  const perUse = fetch ? (positiveInteger(tool['max_content_tokens']) ?? DOCUMENT_READ_TOKENS) : SERVER_TOOL_USE_TOKENS;
  return uses * Math.min(perUse, DOCUMENT_READ_TOKENS);
}
