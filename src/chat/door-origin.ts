// Which door a chat request came through, when not chat completions' own:
// a request of the Messages or the Responses door carries its origin beside
// the chat shape (./messages-origin.ts, ./responses-origin.ts). Routing asks
// an adapter that refuses only such requests (ChatProvider.refusesOnlyDoorRequests)
// for these alone, so a chat request costs it nothing.
import { messagesOrigin } from './messages-origin.ts';
import { responsesOrigin } from './responses-origin.ts';
import type { InvalidRequestError } from '../errors/api-error.ts';
import type { ChatRequest } from './types.ts';

/** True when `request` came through the Messages or the Responses door. */
export function hasDoorOrigin(request: ChatRequest): boolean {
  return messagesOrigin(request) !== undefined || responsesOrigin(request) !== undefined;
}

/** What the gateway's chat translation of a door's request cannot say (the
 * door's 400 naming it), or null: always null for a chat request. */
export function untranslatable(request: ChatRequest): InvalidRequestError | null {
  return messagesOrigin(request)?.untranslatable ?? responsesOrigin(request)?.untranslatable ?? null;
}

/**
 * What the access line says when a provider sends a door's request as the
 * chat translation: the hosted and deferred tools of a Responses request the
 * translation left out of the offer (`toolsLeftOut`); undefined otherwise.
 */
export function translationNotes(request: ChatRequest): Readonly<Record<string, string>> | undefined {
  const left = responsesOrigin(request)?.leftOutTools;
  return left === undefined || left.length === 0 ? undefined : { toolsLeftOut: left.join(',') };
}
