// The refusal of a provider that receives the gateway's chat translation of a
// door's request (an OpenAI-compatible upstream for the Messages door, or for
// the Responses door in translate mode; an Anthropic upstream for the
// Responses door; the demo for both): it refuses what the translation cannot
// say (a thinking block with its signature, a server tool, an encrypted
// reasoning item, a hosted tool's call in the input), with the door's 400
// that names it. The target is skipped; when every target refuses, the
// client gets the 400. A chat request is never refused here.
import { untranslatable } from '../chat/door-origin.ts';
import type { ChatRequest } from '../chat/types.ts';
import type { InvalidRequestError } from '../errors/api-error.ts';

export function untranslatableRefusal(request: ChatRequest): InvalidRequestError | null {
  return untranslatable(request);
}
