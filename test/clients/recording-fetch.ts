// A fetch that keeps each request body a client sends, so tests can assert
// exactly what the SDK put on the wire (and what it added by itself).
export interface RecordedRequest {
  url: string;
  body: unknown;
}

export interface RecordingFetch {
  fetch: typeof fetch;
  requests: RecordedRequest[];
}

export function recordingFetch(): RecordingFetch {
  const requests: RecordedRequest[] = [];
  const recording: typeof fetch = (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const body = init?.body;
    requests.push({ url, body: typeof body === 'string' ? (JSON.parse(body) as unknown) : body });
    return fetch(input, init);
  };
  return { fetch: recording, requests };
}
