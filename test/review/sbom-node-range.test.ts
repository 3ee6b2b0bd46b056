// Review: engines.node comparators with partial versions mean X-ranges in
// node-semver ("20" is 20.x, ">20" is >=21.0.0, "<=22" is <23.0.0-0), while a
// vers range compares whole versions; the SBOM must state the same set of
// Node.js versions as package.json, or refuse the form.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { versFromEngines } from '../../scripts/release/sbom.ts';

function stated(range: string): string {
  try {
    return versFromEngines(range);
  } catch {
    return 'refused';
  }
}

test('a bare major is every 20.x, not exactly 20.0.0', () => {
  assert.ok(['vers:npm/>=20.0.0|<21.0.0', 'refused'].includes(stated('20')), `engines "20" stated as ${stated('20')}`);
});

test('">20" excludes every 20.x (node-semver: >=21.0.0)', () => {
  assert.ok(['vers:npm/>=21.0.0', 'refused'].includes(stated('>20')), `engines ">20" stated as ${stated('>20')}, which holds 20.5.0`);
});

test('"<=22" includes every 22.x (node-semver: <23.0.0-0)', () => {
  assert.ok(['vers:npm/<23.0.0', 'refused'].includes(stated('<=22')), `engines "<=22" stated as ${stated('<=22')}, which leaves out 22.1.0`);
});
