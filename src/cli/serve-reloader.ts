// SIGHUP for `portcullis serve`: each signal asks the gateway for one reload
// (the config file, the TLS listeners' certificates and the keys, all or
// nothing: Gateway.reload). Signals coalesce: a SIGHUP during a reload runs
// exactly one more after it, and none once a shutdown began. A reload that
// ends after the shutdown began has no outcome to tell: systemd hears nothing
// after STOPPING=1 (a READY=1 then would say the stopping service is ready).

export interface ReloaderOptions<T> {
  /** One reload, start to outcome. */
  reload: () => Promise<T>;
  /** The outcome of a reload that ended before any shutdown began. */
  outcome: (result: T) => void;
  stopping: () => boolean;
}

export function createReloader<T>(options: ReloaderOptions<T>): { request(): void } {
  let reloading = false;
  let again = false;
  return {
    request() {
      if (options.stopping()) return;
      if (reloading) {
        again = true;
        return;
      }
      reloading = true;
      void (async () => {
        try {
          do {
            again = false;
            const result = await options.reload();
            if (!options.stopping()) options.outcome(result);
          } while (again && !options.stopping());
        } finally {
          reloading = false;
        }
      })();
    },
  };
}
