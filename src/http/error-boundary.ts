// The shell's error boundary: what a handler's throw becomes on the wire.
// Known errors (ApiError) render themselves; anything else is a generic 500
// whose log line has the error's name and stack frames, never its message,
// which may quote request data.
import { ApiError } from '../errors/api-error.ts';
import { renderError } from '../errors/render.ts';
import type { Logger } from '../log/logger.ts';
import type { Scheduler } from '../time/scheduler.ts';
import { ClientGoneAbort, type RequestContext } from './request-context.ts';
import { sendError } from './respond.ts';

/** The error boundary: known errors render themselves; anything else is a generic 500. `scheduler` times the lingering close. */
export function answerError(ctx: RequestContext, err: unknown, logger: Logger, draining: boolean, scheduler: Scheduler): void {
  const { req, res } = ctx;
  // Already answered (a shutdown's 503 or error frame): whatever the handler
  // threw afterwards has no one to go to.
  if (res.writableEnded) return;
  // The client left while its body was arriving: nothing went wrong here and
  // there is no one to answer.
  // (The request line, written when the response closed, says completed: false.)
  if (err instanceof ClientGoneAbort) {
    res.destroy();
    return;
  }
  if (!(err instanceof ApiError)) {
    logger.error('unexpected error', {
      requestId: ctx.requestId,
      error: err instanceof Error ? err.name : typeof err,
      // Frames only: the first stack line repeats the message, which may quote request data.
      // No stack, no field: a host's logger is never given an undefined value.
      ...(err instanceof Error && err.stack !== undefined ? { stack: stackFrames(err.stack) } : {}),
    });
  }
  if (res.headersSent) {
    // A streaming handler renders its own mid-stream errors; reaching here
    // means the response cannot be repaired, only ended.
    res.destroy();
    return;
  }
  const rendered = ctx.renderError === null ? renderError(err) : ctx.renderError(err, ctx.requestId);
  ctx.error = rendered.code;
  // A body we stopped reading must not be parsed as the next request; during
  // a drain no connection outlives its answer.
  sendError(res, rendered, ctx.bodyAbandoned || !req.complete || draining, scheduler);
}

function stackFrames(stack: string): string {
  return stack
    .split('\n')
    .filter((line) => line.startsWith('    at '))
    .slice(0, 8)
    .map((line) => line.trim())
    .join(' | ');
}
