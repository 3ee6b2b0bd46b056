import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ApiError, UpstreamRejectionError } from '../../src/errors/api-error.ts';
import { ERROR_CATALOGUE, type CatalogueEntry, type ErrorCode } from '../../src/errors/catalogue.ts';
import { errorBody, renderError } from '../../src/errors/render.ts';
import { repositoryRoot } from '../support/repository-root.ts';

const TABLE_HEADER = '| code | status | type | when |';

/** `code status type` for every row of every error table in `text`. */
function errorTableRows(text: string): string[] {
  const rows: string[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]?.trim() !== TABLE_HEADER) continue;
    // Skip the header and its |---| line; the table ends at the first non-row.
    for (let j = i + 2; j < lines.length && lines[j]?.startsWith('|') === true; j++) {
      const cells = (lines[j] ?? '').split('|').map((cell) => cell.trim());
      const [code, status, type] = [cells[1], cells[2], cells[3]].map((cell) => (cell ?? '').replaceAll('`', ''));
      rows.push(`${code} ${status} ${type}`);
    }
  }
  return rows;
}

/** The rows the documents must show: one per code and type, `null` for a null envelope code. */
function catalogueRows(): string[] {
  const rows: string[] = [];
  for (const [code, entry] of Object.entries(ERROR_CATALOGUE) as [ErrorCode, CatalogueEntry][]) {
    const shown = entry.envelopeNull === true ? 'null' : code;
    rows.push(`${shown} ${entry.status} ${entry.type}`);
    if (entry.alsoType !== undefined) rows.push(`${shown} ${entry.status} ${entry.alsoType}`);
  }
  return rows.sort();
}

function documents(): Array<{ name: string; text: string }> {
  const root = repositoryRoot();
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => ({ name: `docs/${name}`, text: readFileSync(join(root, 'docs', name), 'utf8') }));
  return [{ name: 'README.md', text: readFileSync(join(root, 'README.md'), 'utf8') }, ...docs];
}

describe('the error tables in README.md and docs/ are the catalogue', () => {
  const all = documents().map((doc) => ({ ...doc, rows: errorTableRows(doc.text) }));

  test('README.md has an error table', () => {
    assert.ok((all.find((doc) => doc.name === 'README.md')?.rows.length ?? 0) > 0);
  });

  for (const doc of all.filter((d) => d.rows.length > 0)) {
    test(`${doc.name}: every row is a catalogue entry, none twice`, () => {
      const expected = new Set(catalogueRows());
      for (const row of doc.rows) assert.ok(expected.has(row), `${doc.name}: '${row}' is not in src/errors/catalogue.ts`);
      assert.equal(new Set(doc.rows).size, doc.rows.length, `${doc.name} repeats a row`);
    });
  }

  test('together they document every entry', () => {
    const documented = new Set(all.flatMap((doc) => doc.rows));
    assert.deepEqual([...documented].sort(), catalogueRows());
  });
});

describe('the catalogue', () => {
  test('every ApiError takes status and type from its entry; the default message where there is one', () => {
    for (const [code, entry] of Object.entries(ERROR_CATALOGUE) as [ErrorCode, CatalogueEntry][]) {
      const error = new ApiError(code);
      assert.equal(error.status, entry.status, code);
      assert.equal(error.type, entry.type, code);
      if (entry.message !== null) assert.equal(error.message, entry.message, code);
      assert.equal(error.toBody().error.code, entry.envelopeNull === true ? null : code);
    }
  });

  test('a type other than the entry’s (or its alsoType) is a programming error', () => {
    assert.throws(() => new ApiError('model_not_found', 'x', { type: 'server_error' }), TypeError);
    assert.equal(new ApiError('unknown_url', 'x', { type: 'not_found_error' }).type, 'not_found_error');
  });

  test('statuses and types agree with what clients expect of them', () => {
    for (const [code, entry] of Object.entries(ERROR_CATALOGUE) as [ErrorCode, CatalogueEntry][]) {
      if (entry.status === 429) assert.match(entry.type, /^(rate_limit_error|insufficient_quota)$/, code);
      if (entry.status >= 500) assert.equal(entry.failure === 'request', false, code);
      if (entry.status < 500 && entry.status !== 429) assert.equal(entry.failure, 'request', code);
    }
  });
});

describe('renderError', () => {
  test('a known error renders itself: status, headers, the envelope with all four keys', () => {
    const rendered = renderError(new ApiError('method_not_allowed', 'Method PUT is not allowed.', { headers: { allow: 'GET' } }));
    assert.deepEqual(rendered, {
      status: 405,
      headers: { allow: 'GET' },
      body: '{"error":{"message":"Method PUT is not allowed.","type":"invalid_request_error","param":null,"code":"method_not_allowed"}}',
      code: 'method_not_allowed',
    });
  });

  test('anything else is the generic 500 with no internals', () => {
    for (const thrown of [new Error('secret sk-live-1 /etc/passwd'), 'a string', undefined, { status: 400 }]) {
      assert.deepEqual(renderError(thrown), {
        status: 500,
        headers: {},
        body: '{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":"internal_error"}}',
        code: 'internal_error',
      });
    }
  });

  test('an upstream’s 400 relays its own code and param; the catalogue code is for logs and retries', () => {
    const relayed = new UpstreamRejectionError('bad temperature', 'temperature', 'invalid_value');
    assert.equal(relayed.code, 'upstream_rejected_request');
    assert.deepEqual(errorBody(relayed), { error: { message: 'bad temperature', type: 'invalid_request_error', param: 'temperature', code: 'invalid_value' } });
    assert.equal(renderError(new UpstreamRejectionError('no', null, null)).body, '{"error":{"message":"no","type":"invalid_request_error","param":null,"code":null}}');
  });

  test('the HTTP parser’s answers have a null code', () => {
    assert.equal(
      renderError(new ApiError('http_request_timeout')).body,
      '{"error":{"message":"The request was not received in time.","type":"invalid_request_error","param":null,"code":null}}',
    );
    assert.equal(renderError(new ApiError('http_malformed')).status, 400);
  });
});
