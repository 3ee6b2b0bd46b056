// How to run `portcullis` again from where the user stands, for the hints the
// CLI prints: the installed command when it was started as one, otherwise the
// compiled entry point as the user can type it (`node dist/src/cli/main.js` in
// the checkout). Never `npx portcullis`: the name is not ours on the registry
// until the package is published, so npx could run a stranger's package.
import path from 'node:path';

export function commandName(argv1: string | undefined, cwd: string): string {
  if (argv1 === undefined || argv1 === '') return 'portcullis';
  // An installed package runs through its bin link, named portcullis.
  if (path.basename(argv1) === 'portcullis') return 'portcullis';
  const relative = path.relative(cwd, argv1);
  const shown = relative === '' || relative.startsWith('..') || path.isAbsolute(relative) ? argv1 : relative;
  return `node ${shellWord(shown)}`;
}

/** A word a POSIX shell reads back unchanged: as it is when plain, else in single quotes. */
export function shellWord(text: string): string {
  return /^[A-Za-z0-9_\/.:=@%+,-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * The --config and --data-dir flags a hint must repeat so that the command it
 * suggests works on the same files as the one that printed it.
 */
export function hintFlags(configPath: string | undefined, dataDir: string | undefined): string {
  return (configPath === undefined ? '' : ` --config ${shellWord(configPath)}`) + (dataDir === undefined ? '' : ` --data-dir ${shellWord(dataDir)}`);
}
