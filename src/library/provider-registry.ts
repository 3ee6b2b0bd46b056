// The provider types a host registers (GatewayOptions.providerTypes,
// checkConfig's providerTypes): checked here before anything is built, so a
// malformed adapter is an Error at createGateway/checkConfig time that names
// it, rather than a failure on the first request. The config parser checks the
// same list again on each parse (a reload keeps the list it started with), and
// a host-typed provider's checked config carries its adapter, so building it
// needs no other table (../providers/provider-factories.ts).
import type { ChatCompletion as PublicCompletion, ChatCompletionChunk as PublicChunk, ChatRequest as PublicRequest, ProviderAdapter, ServerSentEvent } from '../api/providers.ts';
import type { ChatCompletion, ChatCompletionChunk, ChatRequest } from '../chat/types.ts';
import { hostProviderTypes } from '../config/host-provider-types.ts';
import { PROVIDER_TYPE_NAMES } from '../config/provider-types.ts';
import type { EventStreamEvent } from '../sse/event-stream-parser.ts';

/**
 * `providerTypes` as given, checked: undefined gives []. Throws a TypeError or
 * Error naming the adapter (its index and type) and what to change: not an
 * array, an adapter without type/settings/parse/create, a duplicate type, a
 * built-in type's name (openai, anthropic, demo), or a setting the gateway owns.
 */
export function checkProviderTypes(providerTypes: unknown): readonly ProviderAdapter[] {
  return [...hostProviderTypes(providerTypes, PROVIDER_TYPE_NAMES).values()];
}

/** The built-in provider type names, which a host type cannot take. */
export const BUILT_IN_PROVIDER_TYPES: readonly string[] = PROVIDER_TYPE_NAMES;

// The public chat shapes are views of the internal ones: what the gateway hands
// a host codec must fit them, and what the gateway itself answers fits what a
// host codec returns. A change on either side that breaks this fails to compile here.
type Assignable<From extends To, To> = [From, To];
export type PublicShapesHold = [
  Assignable<ChatRequest, PublicRequest>,
  Assignable<EventStreamEvent, ServerSentEvent>,
  Assignable<ChatCompletion, PublicCompletion>,
  Assignable<ChatCompletionChunk, PublicChunk>,
];
