// CONNECT asks a server to open a tunnel; the gateway opens none. node hands
// a CONNECT to the server's 'connect' listeners with the bare socket (its
// parser lets go of it) and, with no listener, closes the socket without a
// word. Here it gets what every method a target does not allow gets: a 405 in
// the envelope with an Allow header, through the shell's own request path, so
// it has its request id, the listener's headers and its access-log line.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { ApiError, MethodNotAllowedError } from '../errors/api-error.ts';
import type { RouteHandler } from './request-context.ts';
import type { Router } from './router.ts';

/**
 * Answers each CONNECT on `server` with `handle(req, res, refusal)`: the
 * shell's request handler, given a response made on the socket node handed
 * over and the 405 to answer.
 */
export function answerConnect(
  server: Server,
  responseClass: new (req: IncomingMessage) => ServerResponse,
  router: Router<RouteHandler>,
  handle: (req: IncomingMessage, res: ServerResponse, refusal: ApiError) => void,
): void {
  server.on('connect', (req: IncomingMessage, socket: Socket) => {
    socket.on('error', () => {});
    const res = new responseClass(req);
    res.assignSocket(socket);
    // node's parser has let go of the socket: the close after the answer is
    // ours (a half close, see sendError), and bytes the client meant for the
    // tunnel are read and dropped, never parsed.
    res.once('finish', () => socket.destroySoon());
    socket.once('end', () => socket.destroy());
    socket.resume();
    handle(req, res, connectRefusal(router, req.url ?? ''));
  });
}

/**
 * The 405. A CONNECT's target is usually a host and port, no resource here:
 * the Allow header is then empty (the target allows no method); a path the
 * router knows gets that path's methods, as any other refused method does.
 */
export function connectRefusal(router: Router<RouteHandler>, target: string): ApiError {
  const shown = target.length > 200 ? `${target.slice(0, 200)}...` : target;
  const match = target.startsWith('/') ? router.match('CONNECT', target.split('?', 1)[0] ?? target) : null;
  if (match?.kind === 'method_not_allowed') return new MethodNotAllowedError('CONNECT', shown, match.allow);
  return new ApiError('method_not_allowed', `Method CONNECT is not allowed on ${shown}: the gateway opens no tunnels.`, { headers: { allow: '' } });
}
