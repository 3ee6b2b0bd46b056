// Ctrl-C, SIGTERM or SIGHUP while a release step runs: the step's child is
// stopped (through the AbortSignal given to it), the caller's finally blocks
// run (the temporary clone is removed), and then the process ends by the same
// signal, as it would have without these handlers.
import { ReleaseError } from './release-error.ts';

const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export interface Interrupt {
  /** Aborted when one of the signals arrives; a step's child is killed by it. */
  readonly signal: AbortSignal;
  /** Removes the handlers, then raises again the signal that arrived, if one did. */
  end(): void;
}

export function interruptible(): Interrupt {
  const controller = new AbortController();
  let received: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    received ??= signal;
    controller.abort(new ReleaseError(`stopped by ${signal}; the temporary clone is removed`));
  };
  for (const signal of SIGNALS) process.on(signal, onSignal);
  return {
    signal: controller.signal,
    end() {
      for (const signal of SIGNALS) process.removeListener(signal, onSignal);
      if (received !== undefined) process.kill(process.pid, received);
    },
  };
}
