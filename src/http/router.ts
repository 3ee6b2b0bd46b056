// A tiny exact-path router: method + path, nothing else. The gateway serves
// a handful of fixed paths, so a Map lookup is both the fastest and the most
// auditable choice.

export type RouteMatch<H> =
  | { kind: 'found'; handler: H }
  | { kind: 'method_not_allowed'; allow: readonly string[] }
  | { kind: 'not_found' };

export interface Router<H> {
  add(method: string, path: string, handler: H): void;
  match(method: string, path: string): RouteMatch<H>;
}

export function createRouter<H>(): Router<H> {
  const routes = new Map<string, Map<string, H>>();
  const allowCache = new Map<string, readonly string[]>();

  return {
    add(method, path, handler) {
      let byMethod = routes.get(path);
      if (byMethod === undefined) {
        byMethod = new Map();
        routes.set(path, byMethod);
      }
      const m = method.toUpperCase();
      if (byMethod.has(m)) throw new Error(`route ${m} ${path} is already registered`);
      byMethod.set(m, handler);
      allowCache.delete(path);
    },

    match(method, path) {
      const byMethod = routes.get(path);
      if (byMethod === undefined) return { kind: 'not_found' };
      const handler = byMethod.get(method) ?? (method === 'HEAD' ? byMethod.get('GET') : undefined);
      if (handler !== undefined) return { kind: 'found', handler };
      let allow = allowCache.get(path);
      if (allow === undefined) {
        const methods = [...byMethod.keys()];
        if (byMethod.has('GET')) methods.push('HEAD');
        allow = methods.sort();
        allowCache.set(path, allow);
      }
      return { kind: 'method_not_allowed', allow };
    },
  };
}
