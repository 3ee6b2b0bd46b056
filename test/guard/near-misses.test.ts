// The near-miss corpus (test/fixtures/guard/near-misses.txt): git SHAs, UUIDs,
// timestamps, 10-digit ids, base64 image data, hashes in URLs, code, "S3" and
// "EKS", versions, IPs, dates. With every detector on, no line yields a finding.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { createGuardScanner, DETECTOR_NAMES, type Finding } from '../../src/guard/guard-types.ts';
import { repositoryRoot } from '../support/repository-root.ts';

const lines = readFileSync(path.join(repositoryRoot(), 'test/fixtures/guard/near-misses.txt'), 'utf8').split('\n').filter((line) => line !== '' && !line.startsWith('# '));

describe('the near-miss corpus', () => {
  const scanner = createGuardScanner({ detectors: new Set(DETECTOR_NAMES), patterns: [] });

  it('holds at least 300 lines', () => {
    assert.ok(lines.length >= 300, `${lines.length} lines`);
  });

  it('no line yields a finding, alone or all lines as one text', () => {
    const flagged: string[] = [];
    for (const line of lines) {
      const out: Finding[] = [];
      scanner.scan(line, out);
      for (const f of out) flagged.push(`${f.detector}: ${line.slice(f.start, f.end)} (in ${line})`);
    }
    assert.deepEqual(flagged, []);
    const out: Finding[] = [];
    scanner.scan(lines.join('\n'), out);
    assert.deepEqual(out, []);
  });
});
