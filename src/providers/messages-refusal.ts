// The refusal of a provider that speaks OpenAI's chat completions (or answers
// by itself, as the demo does) to a request from the Messages door: it
// receives the gateway's translation, so it refuses what the translation
// cannot say (a thinking block with its signature, a server tool, a
// document), with the 400 that names it. The target is skipped; when every
// target refuses, the client gets the 400. A chat request is never refused here.
import { messagesOrigin } from '../chat/messages-origin.ts';
import type { ChatRequest } from '../chat/types.ts';
import type { InvalidRequestError } from '../errors/api-error.ts';

export function untranslatableRefusal(request: ChatRequest): InvalidRequestError | null {
  return messagesOrigin(request)?.untranslatable ?? null;
}
