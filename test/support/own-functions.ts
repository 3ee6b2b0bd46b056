// What an object made for itself: the functions among its own properties and
// those of the objects it holds. An object whose methods live on its prototype
// has none, so making one per request makes no function objects.

/**
 * Paths (`assembly.take`) of the own properties of `value`, and of the plain
 * objects it holds down to `depth` levels, that are functions. `skip` holds
 * what the caller passed in (an observer, callbacks, a response): not the
 * object's own making.
 */
export function ownFunctionPaths(value: object, skip: readonly unknown[] = [], depth = 2): string[] {
  const found: string[] = [];
  const seen = new Set<unknown>(skip);
  const walk = (holder: object, prefix: string, level: number): void => {
    seen.add(holder);
    for (const name of Reflect.ownKeys(holder)) {
      const child: unknown = (holder as Record<PropertyKey, unknown>)[name];
      const path = `${prefix}${String(name)}`;
      if (typeof child === 'function') found.push(path);
      else if (typeof child === 'object' && child !== null && !seen.has(child) && level < depth && !ArrayBuffer.isView(child)) {
        walk(child, `${path}.`, level + 1);
      }
    }
  };
  walk(value, '', 0);
  return found;
}
