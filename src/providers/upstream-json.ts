// An upstream's JSON text, parsed; what is not JSON is the upstream's 502.
import { badUpstreamResponseError } from '../upstream/upstream-errors.ts';

export function parseUpstreamJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw badUpstreamResponseError('The upstream provider returned a response that is not valid JSON.', error);
  }
}
