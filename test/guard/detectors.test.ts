// Each detector on its own: what it finds, with the exact span, and the
// near-shapes next to it that it must leave alone (a wrong checksum, a missing
// context word, a glued character).
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { describe, it } from 'node:test';
import { createGuardScanner, DETECTOR_NAMES, type Finding } from '../../src/guard/guard-types.ts';
import { githubTokenFor, jwtFor } from './guard-fixtures.ts';

const scanner = createGuardScanner({ detectors: new Set(DETECTOR_NAMES), patterns: [] });

/** Each finding as `detector:matched text`. */
function found(text: string): string[] {
  const out: Finding[] = [];
  scanner.scan(text, out);
  return out.map((f) => `${f.detector}:${text.slice(f.start, f.end)}`);
}

const PEM_BODY = `${'MIIEowIBAAKCAQEAx'.padEnd(64, 'Q')}\n${'A'.repeat(64)}\n${'z9+/'.repeat(8)}=`;

describe('secrets', () => {
  it('private_key: a PEM or OpenSSH block from BEGIN to the END line; a cut block to its body end; a header alone is not one', () => {
    const block = `-----BEGIN RSA PRIVATE KEY-----\n${PEM_BODY}\n-----END RSA PRIVATE KEY-----`;
    assert.deepEqual(found(`key:\n${block}\nthanks`), [`private_key:${block}`]);
    const ssh = `-----BEGIN OPENSSH PRIVATE KEY-----\n${PEM_BODY}\n-----END OPENSSH PRIVATE KEY-----`;
    assert.deepEqual(found(ssh), [`private_key:${ssh}`]);
    const cut = `-----BEGIN PRIVATE KEY-----\n${PEM_BODY}`;
    assert.deepEqual(found(`${cut}\n`), [`private_key:${cut}`]);
    assert.deepEqual(found('Paste it between -----BEGIN PRIVATE KEY----- and -----END PRIVATE KEY----- lines.'), []);
    assert.deepEqual(found(`-----BEGIN PUBLIC KEY-----\n${PEM_BODY}\n-----END PUBLIC KEY-----`), []);
    assert.deepEqual(found(`-----BEGIN CERTIFICATE-----\n${PEM_BODY}\n-----END CERTIFICATE-----`), []);
  });

  it('aws_access_key: the id alone, and its secret within 200 characters after it', () => {
    assert.deepEqual(found('aws_access_key_id = AKIAIOSFODNN7EXAMPLE'), ['aws_access_key:AKIAIOSFODNN7EXAMPLE']);
    assert.deepEqual(found('AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'), [
      'aws_access_key:AKIAIOSFODNN7EXAMPLE', 'aws_access_key:wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    ]);
    assert.deepEqual(found('ASIAY34FZKBOKMUTVV7A'), ['aws_access_key:ASIAY34FZKBOKMUTVV7A']);
    // One too short, one too long, a lower-case letter, a base32-foreign 8, glued to a word.
    assert.deepEqual(found('AKIAIOSFODNN7EXAMPL AKIAIOSFODNN7EXAMPLEX AKIAIOSFODNN7EXAMPLe AKIAIOSFODNN8EXAMPLE xAKIAIOSFODNN7EXAMPLE'), []);
  });

  it('github_token: the CRC-32 in the last six characters is checked; github_pat_ by length', () => {
    const token = githubTokenFor('ghp_', 'aBcDeFgHiJkLmNoPqRsTuVwXyZ0123');
    assert.deepEqual(found(`export GITHUB_TOKEN=${token}`), [`github_token:${token}`]);
    const wrong = `${token.slice(0, -1)}${token.endsWith('0') ? '1' : '0'}`;
    assert.deepEqual(found(`GH=${wrong}`), []);
    for (const prefix of ['gho_', 'ghu_', 'ghs_', 'ghr_']) {
      const other = githubTokenFor(prefix, '0123456789abcdefghijABCDEFGHIJ');
      assert.deepEqual(found(` ${other} `), [`github_token:${other}`]);
    }
    const pat = `github_pat_${'11ABCDEFG0'.repeat(8)}ab`;
    assert.deepEqual(found(pat), [`github_token:${pat}`]);
    assert.deepEqual(found(`${pat}c`), []);
  });

  it('slack_token, stripe_key, google_api_key', () => {
    const slack = 'xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx';
    assert.deepEqual(found(`SLACK=${slack};`), [`slack_token:${slack}`]);
    assert.deepEqual(found('xoxb-12-34-notatoken and xoxq-123456789012-1234567890123-Ab'), []);
    const stripe = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc';
    assert.deepEqual(found(`"${stripe}"`), [`stripe_key:${stripe}`]);
    assert.deepEqual(found('pk_live_4eC39HqLyjWDarjtT1zdp7dc sk_live_short'), []);
    const google = 'AIzaSyA-1234567890abcdefghijklmnopqrstu';
    assert.deepEqual(found(`key=${google}&q=1`), [`google_api_key:${google}`]);
    assert.deepEqual(found(`${google}t`), []);
  });

  it('openai_key and anthropic_key', () => {
    const project = `sk-proj-${'Ab1'.repeat(20)}`;
    assert.deepEqual(found(`OPENAI_API_KEY=${project}`), [`openai_key:${project}`]);
    const legacy = 'sk-abcdefghijklmnopT3BlbkFJabcdefghijklmnopqrst';
    assert.deepEqual(found(legacy), [`openai_key:${legacy}`]);
    assert.deepEqual(found('sk-abcdefghijklmnopqrstuvwxyz0123456789 sk-proj-short'), []);
    const anthropic = `sk-ant-api03-${'x9Z'.repeat(31)}AA`;
    assert.deepEqual(found(`ANTHROPIC_API_KEY="${anthropic}"`), [`anthropic_key:${anthropic}`]);
    assert.deepEqual(found('sk-ant-api03-tooShort'), []);
  });

  it('jwt: three parts whose header is a JSON object with alg', () => {
    const token = jwtFor({ alg: 'RS256', kid: 'k1' }, { sub: '42' });
    assert.deepEqual(found(`Authorization: Bearer ${token}`), [`jwt:${token}`]);
    assert.deepEqual(found(jwtFor({ typ: 'JWT' }, { sub: '42' })), []);
    assert.deepEqual(found(`${jwtFor(['alg'], { sub: 1 })} eyJzdWIiOiIxIn0.eyJzdWIiOiIxIn0`), []);
  });

  it('portcullis_key: pcl_ and pca_ with 16 or more characters of their alphabet', () => {
    const key = `pcl_${'aB3'.repeat(16)}x`;
    assert.deepEqual(found(`-H "Authorization: Bearer ${key}"`), [`portcullis_key:${key}`]);
    const admin = `pca_${'A-_b'.repeat(10)}xyz`;
    assert.deepEqual(found(admin), [`portcullis_key:${admin}`]);
    assert.deepEqual(found('the key pcl_abcd1234 (display prefix)'), []);
  });

  it('secret_assignment: the value after a secret name, above the entropy floor', () => {
    assert.deepEqual(found('DB_PASSWORD=Xq9$vT2!pLm7'), ['secret_assignment:Xq9$vT2!pLm7']);
    assert.deepEqual(found('"client_secret": "a8f3K2mQ9zR7"'), ['secret_assignment:a8f3K2mQ9zR7']);
    assert.deepEqual(found('secret: Zt7-pq3W-88rn'), ['secret_assignment:Zt7-pq3W-88rn']);
    assert.deepEqual(found([
      'password = getPassword()', 'token: string', 'api_key = os.environ["API_KEY"]', 'password=${DB_PASSWORD}',
      'password: aaaaaaaa1', 'max_tokens: 1024', 'token = self.access_token_value', 'password = 12345678', 'pwd=$HOME/x1',
    ].join('\n')), []);
  });
});

describe('personal data', () => {
  it('card_number: issuer prefix, length and Luhn; grouped or bare', () => {
    assert.deepEqual(found('card 4111 1111 1111 1111 exp 12/29'), ['card_number:4111 1111 1111 1111']);
    assert.deepEqual(found('5555-5555-5555-4444, 378282246310005, 3782 822463 10005'), [
      'card_number:5555-5555-5555-4444', 'card_number:378282246310005', 'card_number:3782 822463 10005',
    ]);
    // Luhn off by one, an unknown prefix, a wrong length for the issuer, mixed separators, glued.
    assert.deepEqual(found('4111 1111 1111 1112 9111111111111111 37828224631000 4111-1111 1111-1111 x4111111111111111'), []);
  });

  it('iban: the country length and mod-97, compact or grouped by four', () => {
    assert.deepEqual(found('IBAN: GB82 WEST 1234 5698 7654 32.'), ['iban:GB82 WEST 1234 5698 7654 32']);
    assert.deepEqual(found('DE89370400440532013000'), ['iban:DE89370400440532013000']);
    assert.deepEqual(found('GB82 WEST 1234 5698 7654 33 DE8937040044053201300 ZZ89370400440532013000'), []);
  });

  it('email: local part and a domain with a real top-level label', () => {
    assert.deepEqual(found('write to Jane.Doe+news@mail.example.co.uk.'), ['email:Jane.Doe+news@mail.example.co.uk']);
    assert.deepEqual(found('git@github.com:org/repo.git icon@2x.png @scope/pkg@1.2.3 user@localhost @Component'), []);
  });

  it('phone: E.164 anywhere; the national form only with separators and a context word before it', () => {
    assert.deepEqual(found('ring +44 20 7946 0958 or +14155552671'), ['phone:+44 20 7946 0958', 'phone:+14155552671']);
    assert.deepEqual(found('Phone: (415) 555-2671'), ['phone:(415) 555-2671']);
    assert.deepEqual(found('mobile 020 7946 0958'), ['phone:020 7946 0958']);
    assert.deepEqual(found('(415) 555-2671 and 415-555-2671 with no context; call id 1700000000; x+14155552671; 1+12345678'), []);
    assert.deepEqual(found('phone firmware 2024-01-15 and 10.2.3.4; phone home to 192.168.223.162'), []);
  });

  it('us_ssn: assigned ranges, with separators', () => {
    assert.deepEqual(found('SSN 536-22-1234 and 536 22 1234'), ['us_ssn:536-22-1234', 'us_ssn:536 22 1234']);
    assert.deepEqual(found('000-12-3456 666-12-3456 912-12-3456 536-00-1234 536-22-0000 078-05-1120 536221234 536-22-12345'), []);
  });
});

describe('forms that were missed or misread, each kept precise by a validator', () => {
  it('secret_assignment: a file path is where a secret is kept, not the secret (systemd LoadCredential)', () => {
    assert.deepEqual(found('LoadCredential=token:/etc/secrets/token.txt'), []);
    assert.deepEqual(found('LoadCredential=name:/path/to/file'), []);
    // A path-looking value that is not a path (base64 with a plus) is still a value.
    assert.deepEqual(found('token: /Xq9+vT2/pLm7a'), ['secret_assignment:/Xq9+vT2/pLm7a']);
    assert.deepEqual(found('SetCredential=token:Xq9vT2-pLm7a'), ['secret_assignment:Xq9vT2-pLm7a']);
  });

  it('card_number: groups split by no-break spaces or dots, and full-width digits', () => {
    for (const separator of ['\u00a0', '\u202f', '.']) {
      const card = ['4111', '1111', '1111', '1111'].join(separator);
      assert.deepEqual(found(`card ${card} ok`), [`card_number:${card}`], JSON.stringify(separator));
    }
    const wide = '４１１１ １１１１ １１１１ １１１１';
    assert.deepEqual(found(`カード ${wide} です`), [`card_number:${wide}`]);
    assert.deepEqual(found('４１１１１１１１１１１１１１１１'), ['card_number:４１１１１１１１１１１１１１１１']);
    // Luhn still decides, and one kind of separator per number.
    assert.deepEqual(found('４１１１ １１１１ １１１１ １１１２ 4111.1111 1111.1111 4111\u00a01111 1111 1111'), []);
  });

  it('phone: full-width digits and plus sign, E.164 or with a context word', () => {
    assert.deepEqual(found('call ＋４４ ２０ ７９４６ ０９５８'), ['phone:＋４４ ２０ ７９４６ ０９５８']);
    assert.deepEqual(found('電話 ０３-１２３４-５６７８'), ['phone:０３-１２３４-５６７８']);
    assert.deepEqual(found('番号 ０３-１２３４-５６７８'), []);
  });

  it('iban: lower case when grouped by four; not bare, and not among the groups of a hex dump', () => {
    assert.deepEqual(found('iban de89 3704 0044 0532 0130 00 ok'), ['iban:de89 3704 0044 0532 0130 00']);
    assert.deepEqual(found('be71 0961 2345 6769'), ['iban:be71 0961 2345 6769']);
    assert.deepEqual(found('in 2024 de89 3704 0044 0532 0130 00 ok'), ['iban:de89 3704 0044 0532 0130 00']);
    assert.deepEqual(found('de89370400440532013000 De89 3704 0044 0532 0130 00'), []);
    // In a hex dump: a group after it, two before it, or the dump's offset before it.
    assert.deepEqual(found('00000010: 3a20 be71 0961 2345 6769 0a0a\n00000020: be71 0961 2345 6769\n3a20 2d2d be71 0961 2345 6769'), []);
  });

  it('secret_assignment: a password in a URL, above its own entropy floor', () => {
    assert.deepEqual(found('clone https://user:pa55w0rd@host.example.com/x'), ['secret_assignment:pa55w0rd']);
    assert.deepEqual(found('REDIS_URL=redis://:s3cr3t-Pw@db:6379'), ['secret_assignment:s3cr3t-Pw']);
    // A word, a reference, a short or repetitive value, a port.
    assert.deepEqual(found('https://user:password@h.io https://u:${PW}@h.io https://u:ab1@h.io https://u:aaaa1111@h.io http://h.io:8080@x'), []);
  });

  it('secret_assignment: Authorization: Basic with base64 that decodes to user:password', () => {
    const basic = Buffer.from('deploy:pa55w0rd').toString('base64');
    assert.deepEqual(found(`curl -H "Authorization: Basic ${basic}" https://h.io`), [`secret_assignment:${basic}`]);
    assert.deepEqual(found(`{"proxy-authorization": "basic ${basic}"}`), [`secret_assignment:${basic}`]);
    // No colon once decoded, not base64, a placeholder.
    assert.deepEqual(found(`Authorization: Basic ${Buffer.from('abcdefgh').toString('base64')} Authorization: Basic <credentials>`), []);
  });

  it('secret_assignment: values past ASCII', () => {
    assert.deepEqual(found('password = "pässwörd-Ωmega-42"'), ['secret_assignment:pässwörd-Ωmega-42']);
    assert.deepEqual(found('пароль: password = "сек"'), []);
  });

  it('slack_token: an incoming webhook URL', () => {
    const hook = 'hooks.slack.com/services/T0A1B2C3D/B0A1B2C3D/AbCdEfGhIjKlMnOpQrStUvWx';
    assert.deepEqual(found(`post to https://${hook} now`), [`slack_token:${hook}`]);
    assert.deepEqual(found(`https://${hook}x https://hooks.slack.com/services/T0A1B2C3D/B0A1B2C3D/short`), []);
  });
});

describe('the scanner', () => {
  it('reports only the enabled detectors', () => {
    const only = createGuardScanner({ detectors: new Set(['email']), patterns: [] });
    const out: Finding[] = [];
    only.scan('a@example.com 4111 1111 1111 1111 AKIAIOSFODNN7EXAMPLE', out);
    assert.deepEqual(out, [{ detector: 'email', start: 0, end: 13 }]);
  });

  it('refuses an unknown detector name, listing the known ones', () => {
    assert.throws(() => createGuardScanner({ detectors: new Set(['cards']), patterns: [] }), {
      message: `unknown guard detector "cards"; known: ${DETECTOR_NAMES.join(', ')}`,
    });
  });

  it('a value inside an assignment is reported by its specific detector, once', () => {
    const token = githubTokenFor('ghp_', 'aBcDeFgHiJkLmNoPqRsTuVwXyZ0123');
    assert.deepEqual(found(`token = ${token}`), [`github_token:${token}`]);
  });

  it('appends to what the caller holds, in order of start', () => {
    const out: Finding[] = [{ detector: 'email', start: 0, end: 1 }];
    scanner.scan('x 4111111111111111 y a@b.io', out);
    assert.deepEqual(out, [
      { detector: 'email', start: 0, end: 1 }, { detector: 'card_number', start: 2, end: 18 }, { detector: 'email', start: 21, end: 27 },
    ]);
  });
});
