// The order in which an alias's targets are tried: by priority (lower first),
// and among targets of equal priority a weighted random order, so that traffic
// is shared by weight while every target stays available as a fallback.

interface OrderableTarget {
  /** Lower is tried first; a higher priority is only a fallback. */
  priority: number;
  /** Share of first attempts among targets of the same priority. 0 (or an
   * invalid weight) means "only after every weighted target of its group". */
  weight: number;
}

/**
 * Indices into `targets`, in the order to try them. Within a priority group a
 * weighted shuffle: the first pick is target i with probability
 * weight_i / (sum of the group's weights), the next pick the same among the
 * rest, and so on. Draws `random` once per pick except the last of each
 * group (none for a single target), so the order is deterministic for a given
 * random sequence.
 */
export function orderTargets(targets: readonly OrderableTarget[], random: () => number): number[] {
  const indices: number[] = [];
  for (let i = 0; i < targets.length; i++) indices.push(i);
  if (targets.length < 2) return indices;
  // Array.prototype.sort is stable: equal priorities keep their config order,
  // which is also the tie-breaker for zero weights below.
  indices.sort((a, b) => priorityOf(targets[a]) - priorityOf(targets[b]));

  const order: number[] = [];
  let start = 0;
  while (start < indices.length) {
    const priority = priorityOf(targets[indices[start] as number]);
    let end = start + 1;
    while (end < indices.length && priorityOf(targets[indices[end] as number]) === priority) end++;
    appendWeightedShuffle(indices.slice(start, end), targets, random, order);
    start = end;
  }
  return order;
}

function appendWeightedShuffle(group: number[], targets: readonly OrderableTarget[], random: () => number, out: number[]): void {
  const weighted: number[] = [];
  const unweighted: number[] = [];
  for (const index of group) (weightOf(targets[index]) > 0 ? weighted : unweighted).push(index);

  let remaining = 0;
  for (const index of weighted) remaining += weightOf(targets[index]);
  while (weighted.length > 1) {
    let point = unitDraw(random) * remaining;
    let pick = weighted.length - 1;
    for (let i = 0; i < weighted.length; i++) {
      point -= weightOf(targets[weighted[i] as number]);
      if (point < 0) {
        pick = i;
        break;
      }
    }
    const [index] = weighted.splice(pick, 1) as [number];
    remaining -= weightOf(targets[index]);
    out.push(index);
  }
  if (weighted.length === 1) out.push(weighted[0] as number);
  for (const index of unweighted) out.push(index);
}

function priorityOf(target: OrderableTarget | undefined): number {
  const priority = target?.priority ?? 0;
  return Number.isFinite(priority) ? priority : Number.MAX_VALUE;
}

function weightOf(target: OrderableTarget | undefined): number {
  const weight = target?.weight ?? 0;
  return Number.isFinite(weight) && weight > 0 ? weight : 0;
}

/** A draw in [0, 1): a source that returns 1 or garbage picks the first. */
function unitDraw(random: () => number): number {
  const draw = random();
  return draw >= 0 && draw < 1 ? draw : 0;
}
