// The requests real Responses clients sent, as captured in
// test/fixtures/responses/ (see its README for how).
import { capturedRequestsIn } from '../support/captured-requests.ts';

export type { CapturedRequest } from '../support/captured-requests.ts';
export const { capturedRequest, capturedRequestNames } = capturedRequestsIn('responses');
