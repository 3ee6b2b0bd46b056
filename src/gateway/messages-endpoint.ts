// POST /v1/messages, Anthropic's Messages door, as an endpoint of the pipeline
// (./pipeline.ts). The body is validated against Anthropic's documented request
// (../messages/message-request-validator.ts) and translated to the gateway's
// chat shape (../messages/message-to-chat.ts), which routing, limits and the
// reservation read and an OpenAI-compatible upstream receives; the client's
// own body rides along (../chat/messages-origin.ts) for an Anthropic upstream.
// Answers, streams and errors go back in Anthropic's shapes.
import type { IncomingHttpHeaders } from 'node:http';
import { messagesOrigin, rawAnswer, setMessagesOrigin } from '../chat/messages-origin.ts';
import type { FieldPolicy, RequestFieldName } from '../chat/request-fields.ts';
import type { ChatRequest } from '../chat/types.ts';
import { InvalidRequestError } from '../errors/api-error.ts';
import type { ErrorShape } from '../http/request-context.ts';
import type { JsonObserver } from '../json/json-options.ts';
import { ANTHROPIC_REQUEST_ID_HEADER, renderAnthropicError } from '../messages/message-errors.ts';
import { passthroughFields, validateMessagesRequest } from '../messages/message-request-validator.ts';
import { toAnthropicMessage } from '../messages/message-response.ts';
import { toChatRequest } from '../messages/message-to-chat.ts';
import { estimateMessageTokens } from '../messages/token-estimate.ts';
import { unacceptedFieldError, unacceptedFields } from './door-fields.ts';
import type { Endpoint } from './endpoint.ts';
import { pumpDoorStream } from './door-stream-pump.ts';
import { messagesDoorStream } from './messages-stream.ts';

/** Anthropic's error envelope and `request-id` header on every answer of the Messages paths, the shell's own refusals included. */
export const MESSAGES_ERROR_SHAPE: ErrorShape = { render: renderAnthropicError, requestIdHeader: ANTHROPIC_REQUEST_ID_HEADER };

/** The HTTP shell's choice of error shape (../http/server.ts errorShapeFor): Anthropic's on /v1/messages and below it. */
export function messagesErrorShapeFor(path: string): ErrorShape | null {
  return path === '/v1/messages' || path.startsWith('/v1/messages/') ? MESSAGES_ERROR_SHAPE : null;
}

/** The Messages request's structure is checked once parsed; the parser's own bounds (size, depth, members) hold while it arrives. */
const NO_OBSERVER: JsonObserver = {};

/** anthropic-beta values a request may carry, and the length of one. */
const MAX_BETAS = 64;
const MAX_BETA_LENGTH = 128;
const BETA_VALUE = /^[A-Za-z0-9._-]+$/;
const VERSION_VALUE = /^\d{4}-\d{2}-\d{2}$/;

export interface MessagesEndpointOptions {
  /** Top-level fields some Anthropic provider passes through unchecked (its `messagesPassthrough`). */
  readonly extraFields: ReadonlySet<string>;
  /** The configuration's policy on OpenAI's optional fields: what the translation may carry to an OpenAI-compatible upstream. */
  readonly policy: FieldPolicy;
}

/** The Messages field each optional chat field of the translation comes from. */
const TRANSLATED_FROM: Readonly<Partial<Record<RequestFieldName, string>>> = {
  json_schema: 'output_config.format',
  parallel_tool_calls: 'tool_choice.disable_parallel_tool_use',
};

/** The first optional field of the translation the alias does not accept, as the client's 400 (the Messages field it comes from named). */
function refusedField(request: ChatRequest, policy: FieldPolicy): InvalidRequestError | null {
  const name = unacceptedFields(request, policy)[0];
  return name === undefined ? null : unacceptedFieldError(TRANSLATED_FROM[name] ?? name, name, request, policy, 'An Anthropic upstream');
}

export function createMessagesEndpoint(options: MessagesEndpointOptions): Endpoint {
  const { extraFields, policy } = options;
  return {
    route: { method: 'POST', path: '/v1/messages' },
    keyHeaders: 'anthropic',
    door: 'messages',
    observer: () => NO_OBSERVER,
    validate(body, headers) {
      const version = versionOf(headers);
      const betas = betasOf(headers);
      const messages = validateMessagesRequest(body, version === undefined ? { extraFields } : { extraFields, version });
      const translation = toChatRequest(messages);
      const { request } = translation;
      const untranslatable = translation.untranslatable ?? refusedField(request, policy);
      const record = messages as unknown as Record<string, unknown>;
      setMessagesOrigin(request, { body: record, untranslatable, version, betas, extraFields: passthroughFields(record) });
      return request;
    },
    answer(completion, alias) {
      const raw = rawAnswer(completion);
      if (raw === undefined) return toAnthropicMessage(completion, alias);
      raw['model'] = alias;
      return raw;
    },
    stream: (upstream, call, request, alias) => pumpDoorStream(upstream, messagesDoorStream(alias, () => inputTokensOf(request)), call),
  };
}

/** message_start's input tokens for a translated stream (its upstream reports usage only at the end): the gateway's estimate, as count_tokens gives it. */
function inputTokensOf(request: ChatRequest): number {
  const origin = messagesOrigin(request);
  return origin === undefined ? 0 : estimateMessageTokens(origin.body);
}

/** The client's anthropic-version: a date, as Anthropic's versions are; absent: the provider's own. */
export function versionOf(headers: IncomingHttpHeaders): string | undefined {
  const value = headers['anthropic-version'];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !VERSION_VALUE.test(value)) {
    throw new InvalidRequestError('The anthropic-version header must be one API version date, such as 2023-06-01.', 'anthropic-version', 'invalid_value');
  }
  return value;
}

/** The client's anthropic-beta values, comma-separated (node joins repeated headers with commas), trimmed, each once. */
export function betasOf(headers: IncomingHttpHeaders): readonly string[] {
  const value = headers['anthropic-beta'];
  if (value === undefined) return [];
  const text = Array.isArray(value) ? value.join(',') : value;
  const seen: string[] = [];
  for (const part of text.split(',')) {
    const beta = part.trim();
    if (beta === '') continue;
    if (beta.length > MAX_BETA_LENGTH || !BETA_VALUE.test(beta)) {
      throw new InvalidRequestError(`The anthropic-beta header has a value that is not a beta name ("${beta.slice(0, 40)}"): names are letters, digits, dots, underscores and hyphens, separated by commas.`, 'anthropic-beta', 'invalid_value');
    }
    if (!seen.includes(beta)) seen.push(beta);
    if (seen.length > MAX_BETAS) throw new InvalidRequestError(`The anthropic-beta header names more than ${MAX_BETAS} betas.`, 'anthropic-beta', 'invalid_value');
  }
  return seen;
}
