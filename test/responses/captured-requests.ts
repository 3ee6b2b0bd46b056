// The requests real Responses clients sent, as captured in
// test/fixtures/responses/ (see its README for how).
import { capturedRequestsIn } from '../support/captured-requests.ts';

export type { CapturedRequest } from '../support/captured-requests.ts';

const captured = capturedRequestsIn('responses');

export const capturedRequest = captured.capturedRequest;

/** The captured POST /v1/responses requests (the folder also holds Codex's WebSocket upgrade attempt, which has no body). */
export function capturedRequestNames(): string[] {
  return captured.capturedRequestNames().filter((name) => captured.capturedRequest(name).method === 'POST');
}
