// The gateway's own version, from the package's package.json: two folders up
// from the compiled dist/src/config/, one from src/config/ when the sources
// run. Used by `portcullis --version` and the traces' service.version.
import { readFileSync } from 'node:fs';

export function packageVersion(): string {
  for (const relative of ['../../../package.json', '../../package.json']) {
    try {
      const manifest = JSON.parse(readFileSync(new URL(relative, import.meta.url), 'utf8')) as { name?: unknown; version?: unknown };
      if (manifest.name === 'portcullis' && typeof manifest.version === 'string') return manifest.version;
    } catch {
      // Not this one: try the next.
    }
  }
  return 'unknown';
}
