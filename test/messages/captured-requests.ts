// The requests real Messages clients sent, as captured in
// test/fixtures/messages/ (see its README for how).
import { capturedRequestsIn } from '../support/captured-requests.ts';

export type { CapturedRequest } from '../support/captured-requests.ts';
export const { capturedRequest, capturedRequestNames } = capturedRequestsIn('messages');
