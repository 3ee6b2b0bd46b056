// Counts the reads of one field of an object from now on (its value unchanged):
// for tests that pin a step as not walking a request again.
export function countReads(object: object, field: string): { readonly count: number } {
  const value: unknown = (object as Record<string, unknown>)[field];
  const reads = { count: 0 };
  Object.defineProperty(object, field, {
    get: () => {
      reads.count++;
      return value;
    },
  });
  return reads;
}
