// The operator's policy on OpenAI's optional chat fields (../chat/request-fields.ts)
// applied to a door's translation: a Messages or Responses request whose chat
// translation carries a field the alias does not accept cannot go to an
// upstream that speaks only chat completions as it is. Each door decides what
// that means for each field (refused, or left out where the translation means
// the same without it); an upstream that takes the door's own body is not
// concerned.
import { requestFieldsUsed, type FieldPolicy, type RequestFieldName } from '../chat/request-fields.ts';
import type { ChatRequest } from '../chat/types.ts';
import { InvalidRequestError } from '../errors/api-error.ts';

/** The optional fields of `request` the alias it names does not accept, in the order they appear. */
export function unacceptedFields(request: ChatRequest, policy: FieldPolicy): RequestFieldName[] {
  const used = requestFieldsUsed(request);
  if (used.length === 0) return used;
  const accepted = policy.acceptedFor(request.model);
  return used.filter((name) => !accepted.has(name));
}

/**
 * The 400 for a door's field `from` whose translation is OpenAI's `name`,
 * which the alias does not accept: it names the setting that would, and says
 * which upstream takes the request as sent (`whole`).
 */
export function unacceptedFieldError(from: string, name: RequestFieldName, request: ChatRequest, policy: FieldPolicy, whole: string): InvalidRequestError {
  const refusal = policy.refusal(name, request.model);
  const settings = refusal.kind === 'never' ? [] : refusal.settings.map((x) => `"${x}"`);
  return new InvalidRequestError(
    `'${from}' becomes OpenAI's '${name}' for an upstream that speaks only chat completions, which this model alias does not accept. ${whole} takes it as sent; the gateway's operator can accept it by adding "${name}" to ${settings.join(' or ')} in the gateway's config.`,
    from,
    'unsupported_parameter',
  );
}
