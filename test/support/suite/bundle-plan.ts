// How the suite runner deals the test files into bundles (./bundle.ts): pure,
// over each file's expected time. Unit and system files never share a bundle
// (the unit guard is per process). System files that start the same costly
// helper (Chromium, redis-server, tinyproxy: each started once per process)
// go together, in as few bundles as keeps each near an even share of the
// run; the rest are dealt the longest first, each to the bundle with the
// least time so far.

export interface PlannedFile {
  file: string;
  unit: boolean;
  /** Expected milliseconds (the last run's, or a guess from its size). */
  weight: number;
  /** The once-per-process helper it starts, if any. */
  shares?: string | undefined;
}

export interface PlannedBundle {
  unit: boolean;
  files: string[];
  weight: number;
}

function deal(files: readonly PlannedFile[], count: number, unit: boolean): PlannedBundle[] {
  const bundles: PlannedBundle[] = Array.from({ length: Math.max(1, Math.min(count, files.length)) }, () => ({ unit, files: [], weight: 0 }));
  if (files.length === 0) return [];
  for (const file of [...files].sort((a, b) => b.weight - a.weight || a.file.localeCompare(b.file))) {
    const lightest = bundles.reduce((least, bundle) => (bundle.weight < least.weight ? bundle : least));
    lightest.files.push(file.file);
    lightest.weight += file.weight;
  }
  for (const bundle of bundles) bundle.files.sort();
  return bundles;
}

/**
 * Bundles for `slots` processes at a time: about `perSlot` per slot for each
 * kind, so that bundles end close together; sorted the longest first (so
 * that none starts last and runs on alone).
 */
export function planBundles(files: readonly PlannedFile[], slots: number, perSlot: number): PlannedBundle[] {
  const total = files.reduce((sum, file) => sum + file.weight, 0);
  const share = total / Math.max(1, slots);
  const unit = files.filter((file) => file.unit);
  const system = files.filter((file) => !file.unit);
  const bundles = [...deal(unit, slots * perSlot, true)];
  const groups = new Map<string, PlannedFile[]>();
  for (const file of system) if (file.shares !== undefined) groups.set(file.shares, [...(groups.get(file.shares) ?? []), file]);
  for (const group of groups.values()) {
    const weight = group.reduce((sum, file) => sum + file.weight, 0);
    bundles.push(...deal(group, Math.ceil(weight / Math.max(1, share)), false));
  }
  bundles.push(...deal(system.filter((file) => file.shares === undefined), slots * perSlot, false));
  return bundles.sort((a, b) => b.weight - a.weight);
}
