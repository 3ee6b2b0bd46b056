// The response class of a listener with headers of its own (the admin
// listener's security headers): node makes every response of the listener
// from it, the ones it answers without a request event (400 for a missing
// Host, 417) included, so all of them carry the headers.
import http from 'node:http';

type ResponseClass = typeof http.ServerResponse<http.IncomingMessage>;

/** The response class of a listener whose every answer carries `headers`; node's own class when there are none. */
export function responseClass(headers: ReadonlyArray<readonly [string, string]>): ResponseClass {
  if (headers.length === 0) return http.ServerResponse;
  return class ListenerResponse extends http.ServerResponse<http.IncomingMessage> {
    constructor(req: http.IncomingMessage) {
      super(req);
      for (const [name, value] of headers) this.setHeader(name, value);
    }
  };
}
