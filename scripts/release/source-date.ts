// The one time a release carries: SOURCE_DATE_EPOCH when the releaser sets it
// (https://reproducible-builds.org/specs/source-date-epoch/), else the time of
// the commit being packed, so two builds of one commit agree without anyone
// agreeing on a date.

/** The largest time a ustar mtime field holds (11 octal digits): 2242-03-16. */
const EPOCH_MAX = 0o77777777777;

/** Where the release time came from, for the packer's report. */
export type SourceDateOrigin = 'SOURCE_DATE_EPOCH' | 'commit';

/**
 * SOURCE_DATE_EPOCH's value as whole seconds, or an error naming what to
 * change: the spec allows only ASCII digits (no sign, fraction or spaces).
 */
export function parseSourceDateEpoch(value: string): { ok: true; seconds: number } | { ok: false; message: string } {
  if (!/^[0-9]+$/.test(value)) {
    return { ok: false, message: `SOURCE_DATE_EPOCH must be whole seconds since 1970-01-01 UTC, digits only (like 1767225600); got ${JSON.stringify(value)}: fix or unset it` };
  }
  const seconds = Number(value);
  if (seconds > EPOCH_MAX) {
    return { ok: false, message: `SOURCE_DATE_EPOCH ${value} is past what a tar header holds (${EPOCH_MAX}): fix or unset it` };
  }
  return { ok: true, seconds };
}

/**
 * The release time: SOURCE_DATE_EPOCH when set (an empty value counts as
 * unset, as the spec's examples treat it), else `commitTime()` (git's %ct).
 */
export function releaseTime(env: Readonly<Record<string, string | undefined>>, commitTime: () => string): { seconds: number; origin: SourceDateOrigin } {
  const set = env['SOURCE_DATE_EPOCH'];
  if (set !== undefined && set !== '') {
    const parsed = parseSourceDateEpoch(set);
    if (!parsed.ok) throw new Error(parsed.message);
    return { seconds: parsed.seconds, origin: 'SOURCE_DATE_EPOCH' };
  }
  const fromGit = commitTime().trim();
  const parsed = parseSourceDateEpoch(fromGit);
  if (!parsed.ok) throw new Error(`git log -1 --format=%ct printed ${JSON.stringify(fromGit)}, not a commit time: release from a git checkout with a commit, or set SOURCE_DATE_EPOCH`);
  return { seconds: parsed.seconds, origin: 'commit' };
}
