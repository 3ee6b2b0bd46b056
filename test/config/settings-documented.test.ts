// Every setting the config schema accepts has a row in a settings table of
// the docs. The schema is read from the parser itself: an unknown key in a
// section is refused with the list of what is allowed there, so adding a
// setting to src/config without a row here fails this test.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ConfigError } from '../../src/config/config.ts';
import { embeddedConfigValue } from '../../src/config/config-loader.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { repositoryRoot } from '../support/repository-root.ts';

/** Sections with fixed settings (providers, aliases and auto hold names the operator chooses: docs/config.md documents those per entry). */
const SECTIONS = ['listen', 'admin', 'limits', 'state', 'log', 'shutdown', 'telemetry', 'audit', 'responses', 'embeddings', 'guard', 'security'];
/** What a section needs set before its own settings are read. */
const CONTEXT: Record<string, Record<string, unknown>> = { 'state.redis': { state: { backend: 'redis', redis: { url: 'redis://127.0.0.1:6379' } } } };
/** The settings table, and the single sign-on page's table of admin.oidc. */
const DOCS = ['docs/config.md', 'docs/sso.md'];
/** admin.tls takes what listen.tls takes, documented once under listen.tls. */
const SAME_AS: Record<string, string> = { 'admin.tls': 'listen.tls' };

/** The keys allowed at `at` (a dotted path), as the parser's unknown-setting message lists them. */
function allowedAt(at: string): string[] {
  const config = structuredClone({ ...(embeddedConfigValue() as Record<string, unknown>), ...CONTEXT[at] }) as Record<string, unknown>;
  let node = config;
  for (const part of at.split('.')) node = (node[part] ??= {}) as Record<string, unknown>;
  node['notASetting'] = 1;
  try {
    parseConfig(config, null, '/nowhere');
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    const issue = error.issues.find((i) => i.path === `${at}.notASetting`);
    const list = /\(allowed here: (.*)\)$/.exec(issue?.message ?? '');
    assert.ok(list?.[1] !== undefined, `${at}: ${JSON.stringify(error.issues)}`);
    return list[1].split(', ');
  }
  assert.fail(`${at}: an unknown setting was accepted`);
}

/** Every setting path below the sections, objects first then their settings. */
function schemaPaths(): string[] {
  const paths: string[] = [];
  const visit = (at: string): void => {
    for (const key of allowedAt(at)) {
      const child = `${at}.${key}`;
      paths.push(child);
      if (isSection(child)) visit(child);
    }
  };
  for (const section of SECTIONS) visit(section);
  return paths;
}

/** A setting that is an object of settings: probing it with an unknown key gives a list. */
function isSection(at: string): boolean {
  try {
    allowedAt(at);
    return true;
  } catch {
    return false;
  }
}

/**
 * Every setting named in the first cell of a table row of the docs. A bare
 * name after a dotted one is its sibling: "`state.redis.passwordEnv` / `passwordFile`".
 */
function documentedSettings(): Set<string> {
  const found = new Set<string>();
  for (const doc of DOCS) {
    for (const line of readFileSync(path.join(repositoryRoot(), doc), 'utf8').split('\n')) {
      if (!line.startsWith('| `')) continue;
      const first = line.slice(1, line.indexOf(' |', 1));
      let parent = '';
      for (const match of first.matchAll(/`([^`]+)`/g)) {
        const name = match[1] ?? '';
        const dot = name.lastIndexOf('.');
        if (dot > 0) parent = name.slice(0, dot + 1);
        found.add(dot > 0 ? name : `${parent}${name}`);
      }
    }
  }
  return found;
}

test('every setting of the config schema has a row in a settings table', () => {
  const documented = documentedSettings();
  const paths = schemaPaths();
  assert.ok(paths.includes('admin.allowedHosts') && paths.includes('telemetry.otlp.endpoint') && paths.includes('state.redis.url'), `the probe finds nested settings: ${paths.join(', ')}`);
  const shownAs = (p: string): string => {
    const section = Object.keys(SAME_AS).find((s) => p.startsWith(`${s}.`));
    return section === undefined ? p : `${SAME_AS[section]}${p.slice(section.length)}`;
  };
  // An object of settings is documented by its own row or by its settings' rows.
  const missing = paths.filter((p) => !documented.has(shownAs(p)) && !paths.some((q) => q.startsWith(`${p}.`) && documented.has(shownAs(q))));
  assert.deepEqual(missing, [], `settings without a row in ${DOCS.join(', ')}`);
});
