// A tiny router: method + path. Fixed paths are a Map lookup (the API serves
// a handful of them, and that is both the fastest and the most auditable
// choice); paths with `:name` segments (the admin API's /api/keys/:id) are
// tried in registration order after an exact miss. A segment matches one
// non-empty path segment; the handler reads the value with `pathParams`.

export type RouteMatch<H> =
  | { kind: 'found'; handler: H }
  | { kind: 'method_not_allowed'; allow: readonly string[] }
  | { kind: 'not_found' };

export interface Router<H> {
  add(method: string, path: string, handler: H): void;
  match(method: string, path: string): RouteMatch<H>;
}

interface PatternRoute<H> {
  pattern: string;
  segments: readonly string[];
  byMethod: Map<string, H>;
}

export function createRouter<H>(): Router<H> {
  const routes = new Map<string, Map<string, H>>();
  const patterns: PatternRoute<H>[] = [];
  const allowCache = new Map<string, readonly string[]>();

  const answer = (key: string, byMethod: Map<string, H>, method: string): RouteMatch<H> => {
    const handler = byMethod.get(method) ?? (method === 'HEAD' ? byMethod.get('GET') : undefined);
    if (handler !== undefined) return { kind: 'found', handler };
    let allow = allowCache.get(key);
    if (allow === undefined) {
      const methods = [...byMethod.keys()];
      if (byMethod.has('GET')) methods.push('HEAD');
      allow = methods.sort();
      allowCache.set(key, allow);
    }
    return { kind: 'method_not_allowed', allow };
  };

  return {
    add(method, path, handler) {
      let byMethod: Map<string, H> | undefined;
      if (path.includes('/:')) {
        byMethod = patterns.find((p) => p.pattern === path)?.byMethod;
        if (byMethod === undefined) {
          byMethod = new Map();
          patterns.push({ pattern: path, segments: path.split('/'), byMethod });
        }
      } else {
        byMethod = routes.get(path);
        if (byMethod === undefined) {
          byMethod = new Map();
          routes.set(path, byMethod);
        }
      }
      const m = method.toUpperCase();
      if (byMethod.has(m)) throw new Error(`route ${m} ${path} is already registered`);
      byMethod.set(m, handler);
      allowCache.delete(path);
    },

    match(method, path) {
      const byMethod = routes.get(path);
      if (byMethod !== undefined) return answer(path, byMethod, method);
      if (patterns.length > 0) {
        const segments = path.split('/');
        for (const route of patterns) {
          if (segmentsMatch(route.segments, segments)) return answer(route.pattern, route.byMethod, method);
        }
      }
      return { kind: 'not_found' };
    },
  };
}

function segmentsMatch(pattern: readonly string[], segments: readonly string[]): boolean {
  if (pattern.length !== segments.length) return false;
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i] as string;
    const s = segments[i] as string;
    if (p.startsWith(':') ? s === '' : p !== s) return false;
  }
  return true;
}

/** The values of the `:name` segments of `pattern` in `path` (which the router matched to it). */
export function pathParams(pattern: string, path: string): Record<string, string> {
  const params: Record<string, string> = {};
  const p = pattern.split('/');
  const s = path.split('/');
  for (let i = 0; i < p.length; i++) {
    const name = p[i] as string;
    if (name.startsWith(':')) params[name.slice(1)] = decodeSegment(s[i] ?? '');
  }
  return params;
}

// A malformed escape stays as sent: it names nothing, and the handler's lookup says so.
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
