// What the Responses door does with the response store (../state/response-store-port.ts)
// around one request, as plain functions over data: the body a continued conversation
// becomes, and the record a `store: true` answer leaves. The door's I/O (resolving
// before translation, storing after the answer) calls these.
//
// A continued body is the stored conversation's items, then the request's own input,
// with previous_response_id taken out: the upstream (Responses or chat) receives the
// whole conversation and names nothing stored anywhere, so a fallback to another
// target continues it as well. The previous response's `instructions` are not carried
// over, as OpenAI documents for previous_response_id.
import type { ResolvedConversation, StoredResponse } from '../state/response-store-port.ts';

/** A request's `input` as items: a string is one user message, as OpenAI reads it. */
export function inputItems(input: unknown): unknown[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  return Array.isArray(input) ? input : [];
}

/** `body` continuing `conversation`: its items first, no previous_response_id. */
export function continuedBody(body: Readonly<Record<string, unknown>>, conversation: ResolvedConversation): Record<string, unknown> {
  const { previous_response_id: _previous, ...rest } = body;
  return { ...rest, input: [...conversation.items, ...inputItems(body['input'])] };
}

interface AnsweredTurn {
  /** The response's id, as the client received it. */
  id: string;
  keyId: string;
  nowMs: number;
  ttlMs: number;
  /** The request's previous_response_id and what it resolved to; null for a first turn. */
  previous: { id: string; conversation: ResolvedConversation } | null;
  /** The request's own input (before the stored items were put in front). */
  input: unknown;
  /** The response object's `output` and `usage`. */
  output: readonly unknown[];
  usage: unknown;
}

/** The record a `store: true` answer leaves: the conversation so far and what the answer produced. */
export function storedResponseOf(turn: AnsweredTurn): StoredResponse {
  const earlier = turn.previous?.conversation;
  return {
    id: turn.id,
    keyId: turn.keyId,
    createdAt: turn.nowMs,
    expiresAt: turn.nowMs + turn.ttlMs,
    previousId: turn.previous?.id ?? null,
    depth: (earlier?.depth ?? 0) + 1,
    input: [...(earlier?.items ?? []), ...inputItems(turn.input)],
    output: [...turn.output],
    usage: turn.usage ?? null,
  };
}
