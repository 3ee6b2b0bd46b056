// SIGHUP for `portcullis serve`: each signal asks the gateway for one reload
// (the config file, the TLS listeners' certificates and the keys, all or
// nothing: Gateway.reload). Signals coalesce: a SIGHUP during a reload runs
// exactly one more after it, and none once a shutdown began.

export interface ReloaderOptions {
  /** One reload, start to outcome. */
  reload: () => Promise<unknown>;
  stopping: () => boolean;
}

export function createReloader(options: ReloaderOptions): { request(): void } {
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
            await options.reload();
          } while (again && !options.stopping());
        } finally {
          reloading = false;
        }
      })();
    },
  };
}
