// How the suite runner deals the test files into bundles (./bundle.ts): pure,
// over each file's expected time. Unit and system files never share a bundle
// (the unit guard is per process). Files that share what is costly to start
// or load once per process (Chromium, redis-server, tinyproxy, the client
// SDKs) go together, in as few bundles as keeps each near an even share of
// the run; the rest are dealt the longest first, each to the bundle with the
// least time so far.

export interface PlannedFile {
  file: string;
  unit: boolean;
  /** Expected milliseconds (the last run's, or a guess from its size). */
  weight: number;
  /** What costly to start or load once per process it shares with other files, if anything. */
  shares?: string | undefined;
}

export interface PlannedBundle {
  unit: boolean;
  files: string[];
  weight: number;
}

/** Files that go into one bundle together, dealt as one. */
interface Parcel {
  files: string[];
  weight: number;
}

function deal(parcels: readonly Parcel[], count: number, unit: boolean): PlannedBundle[] {
  if (parcels.length === 0) return [];
  const bundles: PlannedBundle[] = Array.from({ length: Math.max(1, Math.min(count, parcels.length)) }, () => ({ unit, files: [], weight: 0 }));
  for (const parcel of [...parcels].sort((a, b) => b.weight - a.weight || (a.files[0] ?? '').localeCompare(b.files[0] ?? ''))) {
    const lightest = bundles.reduce((least, bundle) => (bundle.weight < least.weight ? bundle : least));
    lightest.files.push(...parcel.files);
    lightest.weight += parcel.weight;
  }
  for (const bundle of bundles) bundle.files.sort();
  return bundles;
}

const single = (file: PlannedFile): Parcel => ({ files: [file.file], weight: file.weight });

/**
 * Bundles for `slots` processes at a time: `perSlot` per slot of each kind
 * (more where files wait more than they compute, so that the slots stay
 * busy, fewer where each bundle's start costs what the files do). Files
 * sharing something are one parcel, cut in as few as keep each within a
 * bundle's even share. Sorted the longest first (so that none starts last
 * and runs on alone).
 */
export function planBundles(files: readonly PlannedFile[], slots: number, perSlot: { unit: number; system: number }): PlannedBundle[] {
  const bundles: PlannedBundle[] = [];
  for (const unit of [true, false]) {
    const kind = files.filter((file) => file.unit === unit);
    const count = slots * (unit ? perSlot.unit : perSlot.system);
    // A bundle's even share of its kind's time.
    const share = kind.reduce((sum, file) => sum + file.weight, 0) / Math.max(1, count);
    const groups = new Map<string, PlannedFile[]>();
    for (const file of kind) if (file.shares !== undefined) groups.set(file.shares, [...(groups.get(file.shares) ?? []), file]);
    const parcels = kind.filter((file) => file.shares === undefined).map(single);
    for (const group of groups.values()) {
      const weight = group.reduce((sum, file) => sum + file.weight, 0);
      // A group longer than a share is cut: each part as even as the files allow.
      const parts = deal(group.map(single), Math.ceil(weight / Math.max(1, share)), unit);
      parcels.push(...parts.map(({ files: parcel, weight: parcelWeight }) => ({ files: parcel, weight: parcelWeight })));
    }
    bundles.push(...deal(parcels, count, unit));
  }
  return bundles.sort((a, b) => b.weight - a.weight);
}
