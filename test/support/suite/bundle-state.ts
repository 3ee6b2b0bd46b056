// What a bundle (./bundle.ts) tells the helpers of the files it runs: which
// file is running, and how many are still to run after it. A helper that is
// costly to start again (test/support/chromium.ts) keeps itself for the next
// file instead of closing when one file ends; the census (./census.ts)
// counts per file. Outside a bundle there is no current file and none to come.
let stillToRun = 0;
const listeners: Array<(file: string) => void> = [];

export function filesStillToRun(): number {
  return stillToRun;
}

/** Calls `listener` with each file's path (under dist/test) as the file begins. */
export function onFileStart(listener: (file: string) => void): void {
  listeners.push(listener);
}

/** @internal ./bundle.ts, as each file begins. */
export function fileStarts(file: string, countAfterIt: number): void {
  stillToRun = countAfterIt;
  for (const listener of listeners) listener(file);
}
