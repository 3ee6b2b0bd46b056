import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parsePrometheusText, PrometheusTextError, sampleValue } from './prometheus-text.ts';

const lines = (...text: string[]): string => text.map((line) => `${line}\n`).join('');

describe('parsePrometheusText: well-formed input', () => {
  test('every type, escapes, comments, timestamps, trailing comma and empty braces', () => {
    const text = lines(
      '# A comment that is not HELP or TYPE is ignored',
      '# HELP a_total Say "hi" \\\\ then\\nstop',
      '# TYPE a_total counter',
      'a_total{x="1\\"2",y="back\\\\slash\\nline",} 3 1700000000000',
      'a_total{} 0',
      '# TYPE g gauge',
      '# HELP g',
      'g NaN',
      '# TYPE h histogram',
      'h_bucket{le="0.5"} 1',
      'h_bucket{le="1e1"} 2',
      'h_bucket{le="+Inf"} 2',
      'h_sum -1.5e-3',
      'h_count 2',
      '# TYPE s summary',
      's{quantile="0.5"} 0.2',
      's{quantile="1"} +Inf',
      's_sum .5',
      's_count 2',
      '# TYPE u untyped',
      'u -Inf',
    );
    const families = parsePrometheusText(text);
    assert.deepEqual(
      families,
      new Map([
        [
          'a_total',
          {
            type: 'counter',
            help: 'Say "hi" \\ then\nstop',
            samples: [
              { name: 'a_total', labels: { x: '1"2', y: 'back\\slash\nline' }, value: 3, timestamp: 1700000000000 },
              { name: 'a_total', labels: {}, value: 0 },
            ],
          },
        ],
        ['g', { type: 'gauge', help: '', samples: [{ name: 'g', labels: {}, value: NaN }] }],
        [
          'h',
          {
            type: 'histogram',
            help: '',
            samples: [
              { name: 'h_bucket', labels: { le: '0.5' }, value: 1 },
              { name: 'h_bucket', labels: { le: '1e1' }, value: 2 },
              { name: 'h_bucket', labels: { le: '+Inf' }, value: 2 },
              { name: 'h_sum', labels: {}, value: -0.0015 },
              { name: 'h_count', labels: {}, value: 2 },
            ],
          },
        ],
        [
          's',
          {
            type: 'summary',
            help: '',
            samples: [
              { name: 's', labels: { quantile: '0.5' }, value: 0.2 },
              { name: 's', labels: { quantile: '1' }, value: Infinity },
              { name: 's_sum', labels: {}, value: 0.5 },
              { name: 's_count', labels: {}, value: 2 },
            ],
          },
        ],
        ['u', { type: 'untyped', help: '', samples: [{ name: 'u', labels: {}, value: -Infinity }] }],
      ]),
    );
  });

  test('empty text: no families; a family declared without samples is kept', () => {
    assert.deepEqual(parsePrometheusText(''), new Map());
    assert.deepEqual(parsePrometheusText(lines('# HELP c C.', '# TYPE c counter')), new Map([['c', { type: 'counter', help: 'C.', samples: [] }]]));
  });

  test('histograms with several label sets are checked per series', () => {
    const families = parsePrometheusText(
      lines(
        '# TYPE h histogram',
        'h_bucket{a="x",le="1"} 5',
        'h_bucket{a="x",le="+Inf"} 5',
        'h_sum{a="x"} 2',
        'h_count{a="x"} 5',
        'h_bucket{a="y",le="1"} 0',
        'h_bucket{a="y",le="+Inf"} 1',
        'h_sum{a="y"} 9',
        'h_count{a="y"} 1',
      ),
    );
    assert.equal(sampleValue(families, 'h_count', { a: 'y' }), 1);
    assert.equal(sampleValue(families, 'h_bucket', { le: '1', a: 'x' }), 5);
  });
});

describe('sampleValue', () => {
  const families = parsePrometheusText(lines('# TYPE c counter', 'c{a="1",b="2"} 7', 'c{a="1"} 8', '# TYPE d gauge', 'd 9'));
  test('matches the sample name and the exact label set', () => {
    assert.equal(sampleValue(families, 'c', { b: '2', a: '1' }), 7);
    assert.equal(sampleValue(families, 'c', { a: '1' }), 8);
    assert.equal(sampleValue(families, 'd'), 9);
    assert.equal(sampleValue(families, 'd', {}), 9);
    assert.equal(sampleValue(families, 'c', {}), undefined);
    assert.equal(sampleValue(families, 'c', { a: '1', b: '2', z: '3' }), undefined);
    assert.equal(sampleValue(families, 'e'), undefined);
  });
});

describe('parsePrometheusText: malformed input throws, naming the line', () => {
  const cases: Array<[string, string, number, RegExp]> = [
    ['no final line feed', '# TYPE a counter\na 1', 2, /must end with a line feed/],
    ['empty line', lines('# TYPE a counter', '', 'a 1'), 2, /empty line/],
    ['sample with no family', lines('a 1'), 1, /sample a before its TYPE/],
    ['sample after HELP only', lines('# HELP a A.', 'a 1'), 2, /sample a before its TYPE line$/],
    ['family without TYPE', lines('# HELP a A.', '# TYPE b gauge', 'b 1'), 1, /family a has no TYPE/],
    ['family without TYPE at the end', lines('# HELP a A.'), 1, /family a has no TYPE/],
    ['sample of another family', lines('# TYPE a counter', 'b 1'), 2, /sample b before its TYPE/],
    ['interleaved families', lines('# TYPE a counter', 'a 1', '# TYPE b counter', 'b 1', '# HELP a again'), 5, /whose family appeared earlier/],
    ['second TYPE', lines('# TYPE a counter', '# TYPE a counter'), 2, /second TYPE/],
    ['second HELP', lines('# HELP a x', '# HELP a y'), 2, /second HELP/],
    ['TYPE after samples', lines('# HELP a x', '# TYPE a gauge', 'a 1', '# TYPE a gauge'), 4, /TYPE for a after its samples/],
    ['unknown type', lines('# TYPE a countr'), 1, /unknown type "countr"/],
    ['malformed TYPE', lines('# TYPE a'), 1, /malformed HELP or TYPE/],
    ['TYPE with extra words', lines('# TYPE a counter x'), 1, /malformed HELP or TYPE/],
    ['bad name in TYPE', lines('# TYPE a-b counter'), 1, /invalid metric name "a-b" in TYPE/],
    ['bad escape in HELP', lines('# HELP a say \\"hi\\"'), 1, /bad escape "\\"" in HELP/],
    ['lone backslash ending HELP', lines('# HELP a end\\'), 1, /bad escape "\\" in HELP/],
    ['bad metric name', lines('# TYPE a counter', '1a 1'), 2, /invalid metric name "1a"/],
    ['bad label name', lines('# TYPE a counter', 'a{1b="x"} 1'), 2, /invalid label name "1b"/],
    ['reserved label name', lines('# TYPE a counter', 'a{__proto__="x"} 1'), 2, /invalid label name "__proto__"/],
    ['label without =', lines('# TYPE a counter', 'a{b} 1'), 2, /label without "="/],
    ['unquoted label value', lines('# TYPE a counter', 'a{b=x} 1'), 2, /must be double-quoted/],
    ['unterminated label value', lines('# TYPE a counter', 'a{b="x} 1'), 2, /unterminated label value/],
    ['bad escape in a label value', lines('# TYPE a counter', 'a{b="\\t"} 1'), 2, /bad escape "\\t" in a label value/],
    ['space inside braces', lines('# TYPE a counter', 'a{b="x", c="y"} 1'), 2, /invalid label name " c"/],
    ['missing comma', lines('# TYPE a counter', 'a{b="x"c="y"} 1'), 2, /expected "," or "}"/],
    ['label given twice', lines('# TYPE a counter', 'a{b="x",b="y"} 1'), 2, /label b given twice/],
    ['no value', lines('# TYPE a counter', 'a'), 2, /expected one space before the value/],
    ['two spaces', lines('# TYPE a counter', 'a  1'), 2, /expected "value" or "value timestamp"/],
    ['trailing space', lines('# TYPE a counter', 'a 1 '), 2, /expected "value" or "value timestamp"/],
    ['too many fields', lines('# TYPE a counter', 'a 1 2 3'), 2, /expected "value" or "value timestamp"/],
    ['word for a value', lines('# TYPE a counter', 'a one'), 2, /invalid value "one"/],
    ['hex value', lines('# TYPE a counter', 'a 0x10'), 2, /invalid value "0x10"/],
    ['Inf without sign', lines('# TYPE a gauge', 'a Inf'), 2, /invalid value "Inf"/],
    ['lower-case nan', lines('# TYPE a gauge', 'a nan'), 2, /invalid value "nan"/],
    ['fractional timestamp', lines('# TYPE a counter', 'a 1 1.5'), 2, /invalid timestamp "1.5"/],
    ['duplicate series, labels reordered', lines('# TYPE a counter', 'a{x="1",y="2"} 1', 'a{y="2",x="1"} 2'), 3, /duplicate series/],
    ['negative counter', lines('# TYPE a counter', 'a -1'), 2, /counter a is -1/],
    ['NaN counter', lines('# TYPE a counter', 'a NaN'), 2, /counter a is NaN/],
    ['histogram sample under the family name', lines('# TYPE h histogram', 'h 1'), 2, /sample h before its TYPE/],
    ['bucket without le', lines('# TYPE h histogram', 'h_bucket 1'), 2, /h_bucket without an le label/],
    ['sum with le', lines('# TYPE h histogram', 'h_sum{le="1"} 1'), 2, /h_sum must not carry an le label/],
    ['bad le', lines('# TYPE h histogram', 'h_bucket{le="big"} 1'), 2, /invalid le "big"/],
    [
      'decreasing bucket counts',
      lines('# TYPE h histogram', 'h_bucket{le="1"} 3', 'h_bucket{le="2"} 2', 'h_bucket{le="+Inf"} 3', 'h_sum 1', 'h_count 3'),
      3,
      /bucket le=2 counts 2, fewer than 3 below it/,
    ],
    [
      'le not increasing',
      lines('# TYPE h histogram', 'h_bucket{le="2"} 1', 'h_bucket{le="1.0"} 1', 'h_bucket{le="+Inf"} 1', 'h_sum 1', 'h_count 1'),
      3,
      /le 1 does not increase on 2/,
    ],
    ['no +Inf bucket', lines('# TYPE h histogram', 'h_bucket{le="1"} 1', 'h_sum 1', 'h_count 1'), 2, /no \+Inf bucket/],
    ['only _sum and _count', lines('# TYPE h histogram', 'h_sum 1', 'h_count 1'), 2, /no \+Inf bucket/],
    ['no _count', lines('# TYPE h histogram', 'h_bucket{le="+Inf"} 1', 'h_sum 1'), 2, /no _count/],
    ['no _sum', lines('# TYPE h histogram', 'h_bucket{le="+Inf"} 1', 'h_count 1'), 2, /no _sum/],
    ['_count differs from +Inf', lines('# TYPE h histogram', 'h_bucket{le="+Inf"} 2', 'h_sum 1', 'h_count 3'), 2, /_count 3 differs from the \+Inf bucket 2/],
    [
      'one label set of two is incomplete',
      lines('# TYPE h histogram', 'h_bucket{a="x",le="+Inf"} 1', 'h_sum{a="x"} 1', 'h_count{a="x"} 1', 'h_bucket{a="y",le="+Inf"} 1', 'h_sum{a="y"} 1'),
      5,
      /h\{a="y"\}: no _count/,
    ],
    ['histogram checked before the next family', lines('# TYPE h histogram', 'h_sum 1', '# TYPE g gauge', 'g 1'), 2, /no \+Inf bucket/],
    ['summary without quantile', lines('# TYPE s summary', 's 1'), 2, /s without a quantile label/],
    ['summary quantile out of range', lines('# TYPE s summary', 's{quantile="1.5"} 1'), 2, /quantile 1.5 is outside/],
    ['summary without _sum', lines('# TYPE s summary', 's{quantile="0.5"} 1', 's_count 1'), 2, /no _sum/],
  ];
  for (const [title, text, line, message] of cases) {
    test(title, () => {
      assert.throws(
        () => parsePrometheusText(text),
        (error: unknown) => {
          assert.ok(error instanceof PrometheusTextError, String(error));
          assert.match(error.message, message);
          assert.equal(error.line, line);
          assert.ok(error.message.startsWith(`line ${line}: `));
          return true;
        },
      );
    });
  }
});
