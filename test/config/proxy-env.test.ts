// The proxy an upstream goes through, as a table of curl's rules: which
// variable applies to which scheme, lower case over upper case, HTTP_PROXY
// never, all_proxy as the fallback, no_proxy exemptions, the URL forms and
// the errors that name the variable without repeating its credentials.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { ConfigError } from '../../src/config/config.ts';
import { parseProxyUrl, proxyAuthorization, resolveProxy, type ProxyEnvironment } from '../../src/config/proxy-env.ts';
import { repositoryRoot } from '../support/repository-root.ts';

const HTTPS = new URL('https://api.example.com/v1');
const HTTP = new URL('http://llm.internal:8000/v1');

interface Row {
  name: string;
  target: URL;
  env: ProxyEnvironment;
  setting?: string | null;
  /** Expected proxy origin and source, or null for direct. */
  expect: { proxy: string; source: string } | null;
  description?: string;
}

const rows: Row[] = [
  { name: 'nothing set: direct', target: HTTPS, env: {}, expect: null, description: 'direct (no https_proxy, HTTPS_PROXY, all_proxy, ALL_PROXY set)' },
  { name: 'HTTPS_PROXY for an https upstream', target: HTTPS, env: { HTTPS_PROXY: 'http://proxy:3128' }, expect: { proxy: 'http://proxy:3128', source: 'HTTPS_PROXY' }, description: 'proxy http://proxy:3128 (HTTPS_PROXY)' },
  { name: 'https_proxy for an https upstream', target: HTTPS, env: { https_proxy: 'http://proxy:3128' }, expect: { proxy: 'http://proxy:3128', source: 'https_proxy' } },
  { name: 'lower case wins over upper case', target: HTTPS, env: { https_proxy: 'http://lower:1', HTTPS_PROXY: 'http://upper:2' }, expect: { proxy: 'http://lower:1', source: 'https_proxy' } },
  { name: 'an empty lower-case variable counts as unset', target: HTTPS, env: { https_proxy: '', HTTPS_PROXY: 'http://upper:2' }, expect: { proxy: 'http://upper:2', source: 'HTTPS_PROXY' } },
  { name: 'http_proxy does not apply to https', target: HTTPS, env: { http_proxy: 'http://proxy:3128' }, expect: null },
  { name: 'HTTPS_PROXY does not apply to http', target: HTTP, env: { HTTPS_PROXY: 'http://proxy:3128' }, expect: null },
  { name: 'http_proxy for an http upstream', target: HTTP, env: { http_proxy: 'http://proxy:3128' }, expect: { proxy: 'http://proxy:3128', source: 'http_proxy' } },
  { name: 'upper-case HTTP_PROXY is ignored (httpoxy), as curl does', target: HTTP, env: { HTTP_PROXY: 'http://proxy:3128' }, expect: null, description: 'direct (no http_proxy, all_proxy, ALL_PROXY set)' },
  { name: 'HTTP_PROXY ignored, ALL_PROXY still applies', target: HTTP, env: { HTTP_PROXY: 'http://a:1', ALL_PROXY: 'http://all:2' }, expect: { proxy: 'http://all:2', source: 'ALL_PROXY' } },
  { name: 'all_proxy is the fallback for https', target: HTTPS, env: { all_proxy: 'http://all:3128' }, expect: { proxy: 'http://all:3128', source: 'all_proxy' } },
  { name: 'all_proxy over ALL_PROXY', target: HTTPS, env: { all_proxy: 'http://l:1', ALL_PROXY: 'http://u:2' }, expect: { proxy: 'http://l:1', source: 'all_proxy' } },
  { name: 'the scheme variable wins over all_proxy', target: HTTPS, env: { all_proxy: 'http://all:1', HTTPS_PROXY: 'http://s:2' }, expect: { proxy: 'http://s:2', source: 'HTTPS_PROXY' } },
  { name: 'no scheme means http://', target: HTTPS, env: { HTTPS_PROXY: 'proxy.corp:8080' }, expect: { proxy: 'http://proxy.corp:8080', source: 'HTTPS_PROXY' } },
  { name: 'no port means 1080, as curl', target: HTTPS, env: { HTTPS_PROXY: 'http://proxy.corp' }, expect: { proxy: 'http://proxy.corp:1080', source: 'HTTPS_PROXY' } },
  { name: 'no scheme and no port', target: HTTPS, env: { HTTPS_PROXY: 'proxy.corp' }, expect: { proxy: 'http://proxy.corp:1080', source: 'HTTPS_PROXY' } },
  { name: 'an explicit :80 stays 80', target: HTTPS, env: { HTTPS_PROXY: 'http://proxy.corp:80' }, expect: { proxy: 'http://proxy.corp', source: 'HTTPS_PROXY' } },
  { name: 'a trailing slash is fine', target: HTTPS, env: { HTTPS_PROXY: 'http://proxy:3128/' }, expect: { proxy: 'http://proxy:3128', source: 'HTTPS_PROXY' } },
  { name: 'upper-case scheme', target: HTTPS, env: { HTTPS_PROXY: 'HTTP://Proxy:3128' }, expect: { proxy: 'http://proxy:3128', source: 'HTTPS_PROXY' } },
  { name: 'an IPv6 proxy', target: HTTPS, env: { HTTPS_PROXY: 'http://[fd00::1]:3128' }, expect: { proxy: 'http://[fd00::1]:3128', source: 'HTTPS_PROXY' } },
  { name: 'an IPv6 proxy without port', target: HTTPS, env: { HTTPS_PROXY: 'http://[fd00::1]' }, expect: { proxy: 'http://[fd00::1]:1080', source: 'HTTPS_PROXY' } },
  { name: 'credentials: proxied, description says so without them', target: HTTPS, env: { HTTPS_PROXY: 'http://alice:s3cret@proxy:3128' }, expect: { proxy: 'http://proxy:3128', source: 'HTTPS_PROXY' }, description: 'proxy http://proxy:3128 (HTTPS_PROXY, with credentials)' },
  { name: '"none" wins over the environment', target: HTTPS, env: { HTTPS_PROXY: 'http://proxy:3128' }, setting: 'none', expect: null, description: 'direct ("proxy": "none")' },
  { name: '"none" with a broken environment is not an error', target: HTTPS, env: { HTTPS_PROXY: 'socks5://proxy:1080' }, setting: 'none', expect: null },
  { name: 'the config proxy wins over the environment', target: HTTPS, env: { HTTPS_PROXY: 'http://env:1' }, setting: 'http://cfg:3128', expect: { proxy: 'http://cfg:3128', source: 'config' }, description: 'proxy http://cfg:3128 (the provider\'s "proxy" setting)' },
  { name: 'the config proxy without a port: 1080, as in the environment', target: HTTPS, env: {}, setting: 'http://cfg', expect: { proxy: 'http://cfg:1080', source: 'config' } },
  { name: 'NO_PROXY does not apply to the config proxy', target: HTTPS, env: { NO_PROXY: '*' }, setting: 'http://cfg:3128', expect: { proxy: 'http://cfg:3128', source: 'config' } },
  { name: 'the config proxy applies to http upstreams too', target: HTTP, env: {}, setting: 'http://cfg:3128', expect: { proxy: 'http://cfg:3128', source: 'config' } },
  // no_proxy / NO_PROXY
  { name: 'NO_PROXY=* exempts everything', target: HTTPS, env: { HTTPS_PROXY: 'http://p:1', NO_PROXY: '*' }, expect: null, description: 'direct (NO_PROXY matches "*")' },
  { name: 'no_proxy over NO_PROXY', target: HTTPS, env: { HTTPS_PROXY: 'http://p:1', no_proxy: 'other.com', NO_PROXY: '*' }, expect: { proxy: 'http://p:1', source: 'HTTPS_PROXY' } },
  { name: 'an empty no_proxy falls to NO_PROXY', target: HTTPS, env: { HTTPS_PROXY: 'http://p:1', no_proxy: '', NO_PROXY: 'example.com' }, expect: null, description: 'direct (NO_PROXY matches "example.com")' },
  { name: 'domain suffix without a dot', target: HTTPS, env: { HTTPS_PROXY: 'http://p:1', no_proxy: 'example.com' }, expect: null, description: 'direct (no_proxy matches "example.com")' },
  { name: 'domain suffix with a leading dot', target: HTTPS, env: { HTTPS_PROXY: 'http://p:1', no_proxy: '.example.com' }, expect: null },
  { name: 'a leading-dot entry matches the domain itself, as curl', target: new URL('https://example.com/'), env: { HTTPS_PROXY: 'http://p:1', no_proxy: '.example.com' }, expect: null },
  { name: '*.domain is read as .domain', target: HTTPS, env: { HTTPS_PROXY: 'http://p:1', no_proxy: '*.example.com' }, expect: null },
  { name: 'a suffix only at a label boundary', target: new URL('https://notexample.com/'), env: { HTTPS_PROXY: 'http://p:1', no_proxy: 'example.com' }, expect: { proxy: 'http://p:1', source: 'HTTPS_PROXY' } },
  { name: 'a subdomain entry does not match its parent', target: new URL('https://example.com/'), env: { HTTPS_PROXY: 'http://p:1', no_proxy: 'api.example.com' }, expect: { proxy: 'http://p:1', source: 'HTTPS_PROXY' } },
  { name: 'case-insensitive', target: HTTPS, env: { HTTPS_PROXY: 'http://p:1', no_proxy: 'EXAMPLE.Com' }, expect: null },
  { name: 'a trailing dot on the entry is ignored', target: HTTPS, env: { HTTPS_PROXY: 'http://p:1', no_proxy: 'example.com.' }, expect: null },
  { name: 'a trailing dot on the host is ignored', target: new URL('https://api.example.com./'), env: { HTTPS_PROXY: 'http://p:1', no_proxy: 'example.com' }, expect: null },
  { name: 'comma list with blanks', target: HTTPS, env: { HTTPS_PROXY: 'http://p:1', no_proxy: 'localhost, 127.0.0.1 , example.com' }, expect: null },
  { name: 'blank-separated list', target: HTTPS, env: { HTTPS_PROXY: 'http://p:1', no_proxy: 'localhost example.com' }, expect: null },
  { name: 'repeated commas', target: HTTPS, env: { HTTPS_PROXY: 'http://p:1', no_proxy: ',,localhost,,,example.com,' }, expect: null },
  { name: '* among other entries', target: HTTPS, env: { HTTPS_PROXY: 'http://p:1', no_proxy: 'localhost,*' }, expect: null },
  { name: 'an exact IPv4', target: new URL('https://10.1.2.3/'), env: { HTTPS_PROXY: 'http://p:1', no_proxy: '10.1.2.3' }, expect: null, description: 'direct (no_proxy matches "10.1.2.3")' },
  { name: 'another IPv4 is not exempt', target: new URL('https://10.1.2.4/'), env: { HTTPS_PROXY: 'http://p:1', no_proxy: '10.1.2.3' }, expect: { proxy: 'http://p:1', source: 'HTTPS_PROXY' } },
  { name: 'an IPv4 prefix is not a match (no string prefixes, as curl 7.86+)', target: new URL('https://10.1.2.3/'), env: { HTTPS_PROXY: 'http://p:1', no_proxy: '10.1' }, expect: { proxy: 'http://p:1', source: 'HTTPS_PROXY' } },
  { name: 'IPv4 CIDR', target: new URL('https://10.200.0.7/'), env: { HTTPS_PROXY: 'http://p:1', no_proxy: '10.0.0.0/8' }, expect: null },
  { name: 'outside the IPv4 CIDR', target: new URL('https://11.0.0.1/'), env: { HTTPS_PROXY: 'http://p:1', no_proxy: '10.0.0.0/8' }, expect: { proxy: 'http://p:1', source: 'HTTPS_PROXY' } },
  { name: 'IPv4 /32', target: new URL('https://192.168.1.1/'), env: { HTTPS_PROXY: 'http://p:1', no_proxy: '192.168.1.1/32' }, expect: null },
  { name: 'IPv4 /0 matches every IPv4 address', target: new URL('https://8.8.8.8/'), env: { HTTPS_PROXY: 'http://p:1', no_proxy: '0.0.0.0/0' }, expect: null },
  { name: 'an address entry never matches a name', target: new URL('https://localhost/'), env: { HTTPS_PROXY: 'http://p:1', no_proxy: '127.0.0.1' }, expect: { proxy: 'http://p:1', source: 'HTTPS_PROXY' } },
  { name: 'a name entry never matches an address (no DNS)', target: new URL('https://127.0.0.1/'), env: { HTTPS_PROXY: 'http://p:1', no_proxy: 'localhost' }, expect: { proxy: 'http://p:1', source: 'HTTPS_PROXY' } },
  { name: 'an IPv6 host in brackets, exact entry', target: new URL('https://[::1]:8443/'), env: { HTTPS_PROXY: 'http://p:1', no_proxy: '::1' }, expect: null },
  { name: 'an IPv6 entry in brackets', target: new URL('https://[::1]:8443/'), env: { HTTPS_PROXY: 'http://p:1', no_proxy: '[::1]' }, expect: null },
  { name: 'an IPv6 entry in another spelling', target: new URL('https://[fd00:0:0:0:0:0:0:1]/'), env: { HTTPS_PROXY: 'http://p:1', no_proxy: 'fd00::1' }, expect: null },
  { name: 'IPv6 CIDR', target: new URL('https://[fd12:3456::9]/'), env: { HTTPS_PROXY: 'http://p:1', no_proxy: 'fd00::/8' }, expect: null },
  { name: 'IPv6 CIDR with a prefix not on a byte boundary', target: new URL('https://[fd12::1]/'), env: { HTTPS_PROXY: 'http://p:1', no_proxy: 'fd10::/12' }, expect: null },
  { name: 'outside the IPv6 CIDR', target: new URL('https://[fe80::1]/'), env: { HTTPS_PROXY: 'http://p:1', no_proxy: 'fd00::/8' }, expect: { proxy: 'http://p:1', source: 'HTTPS_PROXY' } },
  { name: 'an IPv4 CIDR does not match an IPv6 host', target: new URL('https://[fd00::1]/'), env: { HTTPS_PROXY: 'http://p:1', no_proxy: '10.0.0.0/8' }, expect: { proxy: 'http://p:1', source: 'HTTPS_PROXY' } },
  { name: 'a host:port entry never matches, as curl', target: HTTPS, env: { HTTPS_PROXY: 'http://p:1', no_proxy: 'api.example.com:443' }, expect: { proxy: 'http://p:1', source: 'HTTPS_PROXY' } },
  { name: 'NO_PROXY applies to http upstreams too', target: HTTP, env: { http_proxy: 'http://p:1', NO_PROXY: '.internal' }, expect: null },
  { name: 'an exempt upstream never reads a broken proxy variable', target: HTTPS, env: { HTTPS_PROXY: 'socks5://p:1', NO_PROXY: 'example.com' }, expect: null },
  { name: 'the IDN entry matches the punycode host', target: new URL('https://api.bücher.example/'), env: { HTTPS_PROXY: 'http://p:1', no_proxy: 'bücher.example' }, expect: null },
];

describe('resolveProxy: curl\'s rules as a table', () => {
  for (const row of rows) {
    test(row.name, () => {
      const result = resolveProxy(row.target, row.env, row.setting ?? null);
      if (row.expect === null) {
        assert.equal(result.route, null);
      } else {
        assert.ok(result.route !== null, result.description);
        assert.equal(`${result.route.url.protocol}//${result.route.url.host}`, row.expect.proxy);
        assert.equal(result.route.url.href, `${row.expect.proxy}/`);
        assert.equal(result.route.source, row.expect.source);
      }
      if (row.description !== undefined) assert.equal(result.description, row.description);
    });
  }
});

describe('credentials', () => {
  test('user:password@ becomes Basic, percent-decoded as UTF-8', () => {
    const { route } = resolveProxy(HTTPS, { HTTPS_PROXY: 'http://al%40ice:p%3Ass%20w%C3%B6rd@proxy:3128' }, null);
    assert.equal(route?.authorization, `Basic ${Buffer.from('al@ice:p:ss wörd', 'utf8').toString('base64')}`);
    assert.equal(route?.url.href, 'http://proxy:3128/');
    assert.equal(route?.url.username, '');
  });
  test('a user without a password', () => {
    const { route } = resolveProxy(HTTPS, { HTTPS_PROXY: 'http://bob@proxy:3128' }, null);
    assert.equal(route?.authorization, `Basic ${Buffer.from('bob:').toString('base64')}`);
  });
  test('credentials in a value without a scheme', () => {
    const { route } = resolveProxy(HTTPS, { HTTPS_PROXY: 'alice:s3cret@proxy:3128' }, null);
    assert.equal(route?.authorization, proxyAuthorization('alice', 's3cret'));
    assert.equal(route?.url.href, 'http://proxy:3128/');
  });
  test('no credentials: no authorization', () => {
    assert.equal(resolveProxy(HTTPS, { HTTPS_PROXY: 'http://proxy:3128' }, null).route?.authorization, undefined);
  });
  test('proxyAuthorization', () => {
    assert.equal(proxyAuthorization('alice', 's3cret'), 'Basic YWxpY2U6czNjcmV0');
  });
});

describe('notes for the start log', () => {
  test('HTTP_PROXY set without http_proxy, for an http upstream', () => {
    const { notes } = resolveProxy(HTTP, { HTTP_PROXY: 'http://p:1' }, null);
    assert.deepEqual(notes, ['HTTP_PROXY is ignored for http:// upstreams, as curl does (a CGI server sets it from a request\'s "Proxy:" header); set http_proxy instead']);
  });
  test('no note when http_proxy is also set, or for https upstreams', () => {
    assert.deepEqual(resolveProxy(HTTP, { HTTP_PROXY: 'http://p:1', http_proxy: 'http://p:1' }, null).notes, []);
    assert.deepEqual(resolveProxy(HTTPS, { HTTP_PROXY: 'http://p:1' }, null).notes, []);
  });
  test('NO_PROXY entries that never match are named with the reason', () => {
    const { notes, route } = resolveProxy(HTTPS, { HTTPS_PROXY: 'http://p:1', NO_PROXY: 'a.com:443, 10.0.0.0/33,fd00::/129, 1.2.3.4/x, foo*bar, *' }, null);
    assert.equal(route, null);
    assert.deepEqual(notes, [
      'NO_PROXY entry "a.com:443" never matches: it has a port, and curl compares host names and addresses only; write it without ":port"',
      'NO_PROXY entry "10.0.0.0/33" never matches: it is not a valid CIDR range (an IPv4 address with /0 to /32, or an IPv6 address with /0 to /128)',
      'NO_PROXY entry "fd00::/129" never matches: it is not a valid CIDR range (an IPv4 address with /0 to /32, or an IPv6 address with /0 to /128)',
      'NO_PROXY entry "1.2.3.4/x" never matches: it is not a valid CIDR range (an IPv4 address with /0 to /32, or an IPv6 address with /0 to /128)',
      'NO_PROXY entry "foo*bar" never matches: it is not a host name, an address or a CIDR range ("*" is allowed only alone or as "*.domain")',
    ]);
  });
  test('[v6]:port is a port entry', () => {
    const { notes } = resolveProxy(HTTPS, { HTTPS_PROXY: 'http://p:1', no_proxy: '[::1]:8443' }, null);
    assert.deepEqual(notes, ['no_proxy entry "[::1]:8443" never matches: it has a port, and curl compares host names and addresses only; write it without ":port"']);
  });
});

describe('errors name the variable and never repeat its value', () => {
  const cases: { env: ProxyEnvironment; target?: URL; message: string }[] = [
    { env: { HTTPS_PROXY: 'https://alice:s3cret@proxy:443' }, message: 'environment: HTTPS_PROXY: is an https:// proxy (TLS to the proxy itself), which Portcullis does not support: give the proxy\'s http:// address; an https:// upstream stays encrypted end to end inside the CONNECT tunnel' },
    { env: { https_proxy: 'socks5://alice:s3cret@proxy:1080' }, message: 'environment: https_proxy: is a socks5:// proxy; Portcullis supports http:// proxies only (HTTP CONNECT)' },
    { env: { ALL_PROXY: 'socks5h://proxy:1080' }, message: 'environment: ALL_PROXY: is a socks5h:// proxy; Portcullis supports http:// proxies only (HTTP CONNECT)' },
    { env: { all_proxy: 'SOCKS4://proxy:1080' }, message: 'environment: all_proxy: is a socks4:// proxy; Portcullis supports http:// proxies only (HTTP CONNECT)' },
    { env: { http_proxy: 'ftp://alice:s3cret@proxy:21' }, target: HTTP, message: 'environment: http_proxy: has the scheme "ftp://"; Portcullis supports http:// proxies only' },
    { env: { HTTPS_PROXY: 'http://alice:s3cret@proxy:3128/path' }, message: 'environment: HTTPS_PROXY: must be just http://host:port, without a path, query or fragment' },
    { env: { HTTPS_PROXY: 'http://alice:s3cret@:3128' }, message: 'environment: HTTPS_PROXY: is not a proxy URL; expected http://host:port (optionally http://user:password@host:port)' },
    { env: { HTTPS_PROXY: 'http://alice:s3cret@proxy:99999' }, message: 'environment: HTTPS_PROXY: is not a proxy URL; expected http://host:port (optionally http://user:password@host:port)' },
    { env: { HTTPS_PROXY: 'http://alice:s3cret%zz@proxy:3128' }, message: 'environment: HTTPS_PROXY: has credentials that are not valid percent-encoding: write a "%" in the user or password as %25' },
  ];
  for (const c of cases) {
    test(c.message, () => {
      assert.throws(
        () => resolveProxy(c.target ?? HTTPS, c.env, null),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError);
          assert.equal(error.message, c.message);
          assert.doesNotMatch(error.message, /s3cret|alice/);
          return true;
        },
      );
    });
  }
  test('a variable that does not apply to the upstream is not read', () => {
    assert.equal(resolveProxy(HTTPS, { http_proxy: 'socks5://p:1' }, null).route, null);
    assert.equal(resolveProxy(HTTPS, { HTTPS_PROXY: 'http://ok:1', ALL_PROXY: 'socks5://p:1' }, null).route?.source, 'HTTPS_PROXY');
  });
  test('parseProxyUrl for the config names the setting', () => {
    assert.throws(() => parseProxyUrl('socks5://p:1', 'config'), { message: 'embedded config: proxy: is a socks5:// proxy; Portcullis supports http:// proxies only (HTTP CONNECT)' });
  });
});

test('docs/config.md quotes the error a socks proxy in HTTPS_PROXY gives, word for word', () => {
  const doc = readFileSync(path.join(repositoryRoot(), 'docs/config.md'), 'utf8');
  const prefix = 'portcullis serve: invalid configuration: ';
  const quoted = doc.split('\n').find((line) => line.startsWith(`${prefix}environment: HTTPS_PROXY:`));
  assert.ok(quoted !== undefined, 'the "Egress proxy" section shows the error');
  assert.throws(() => resolveProxy(HTTPS, { HTTPS_PROXY: 'socks5://proxy:1080' }, null), { message: quoted.slice(prefix.length) });
});

test('a NO_PROXY longer than the bound: the part not read is said in a note, never dropped silently', () => {
  const long = `${'a.example,'.repeat(7000)}internal.example`;
  const { route, notes } = resolveProxy(new URL('https://internal.example/v1'), { HTTPS_PROXY: 'http://p:3128', NO_PROXY: long }, null);
  // The entry past the bound is not read: the upstream goes through the proxy, and the note says why.
  assert.equal(route?.url.host, 'p:3128');
  assert.equal(notes.length, 1);
  assert.match(notes[0] as string, /^NO_PROXY entry ".{20}\.\.\." never matches: everything after the first 65536 characters is not read$/);
});
