import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  createRegistry,
  DEFAULT_MAX_SERIES,
  MetricError,
  OTHER_LABEL_VALUE,
  PROMETHEUS_CONTENT_TYPE,
  type Registry,
} from '../../src/metrics/registry.ts';
import { parsePrometheusText, sampleValue } from './prometheus-text.ts';

/** assert.throws matcher for a MetricError with this code. */
function metricError(code: string, metric?: string): (error: unknown) => boolean {
  return (error) => {
    assert.ok(error instanceof MetricError, `expected a MetricError, got ${String(error)}`);
    assert.equal(error.code, code);
    if (metric !== undefined) assert.equal(error.metric, metric);
    return true;
  };
}

const lines = (...text: string[]): string => text.map((line) => `${line}\n`).join('');

describe('constants', () => {
  test('content type and defaults', () => {
    assert.equal(PROMETHEUS_CONTENT_TYPE, 'text/plain; version=0.0.4; charset=utf-8');
    assert.equal(DEFAULT_MAX_SERIES, 1000);
    assert.equal(OTHER_LABEL_VALUE, '_other');
  });

  test('an empty registry exposes nothing', () => {
    assert.equal(createRegistry().expose(), '');
  });
});

describe('counter', () => {
  test('labelled series sorted by label values whatever the arrival order', () => {
    const registry = createRegistry();
    const requests = registry.counter({ name: 'http_requests_total', help: 'Requests.', labelNames: ['alias', 'status'] });
    requests.inc({ alias: 'small', status: '500' });
    requests.inc({ alias: 'big', status: '200' }, 3);
    requests.inc({ status: '200', alias: 'small' });
    requests.inc({ alias: 'small', status: '200' }, 0.5);
    requests.inc({ alias: 'big', status: '200' });
    assert.equal(requests.name, 'http_requests_total');
    assert.equal(
      registry.expose(),
      lines(
        '# HELP http_requests_total Requests.',
        '# TYPE http_requests_total counter',
        'http_requests_total{alias="big",status="200"} 4',
        'http_requests_total{alias="small",status="200"} 1.5',
        'http_requests_total{alias="small",status="500"} 1',
      ),
    );
  });

  test('without labels it shows 0 from the start; with labels it shows no sample until used', () => {
    const registry = createRegistry();
    const plain = registry.counter({ name: 'reloads_total', help: 'Reloads.' });
    registry.counter({ name: 'errors_total', help: 'Errors.', labelNames: ['code'] });
    assert.equal(
      registry.expose(),
      lines('# HELP reloads_total Reloads.', '# TYPE reloads_total counter', 'reloads_total 0', '# HELP errors_total Errors.', '# TYPE errors_total counter'),
    );
    plain.inc({});
    plain.inc({}, 0);
    assert.match(registry.expose(), /^reloads_total 1$/m);
  });

  test('refuses to go down or by a non-finite amount', () => {
    const counter = createRegistry().counter({ name: 'c_total', help: 'c' });
    for (const by of [-1, -0.1, NaN, Infinity, '1' as unknown as number]) {
      assert.throws(() => counter.inc({}, by), metricError('invalid_value', 'c_total'), String(by));
    }
  });
});

describe('gauge', () => {
  test('set, inc and dec, and the special values', () => {
    const registry = createRegistry();
    const inFlight = registry.gauge({ name: 'in_flight', help: 'In flight.', labelNames: ['kind'] });
    inFlight.inc({ kind: 'stream' });
    inFlight.inc({ kind: 'stream' }, 2);
    inFlight.dec({ kind: 'stream' });
    inFlight.dec({ kind: 'request' });
    inFlight.set({ kind: 'nan' }, NaN);
    inFlight.set({ kind: 'plus' }, Infinity);
    inFlight.set({ kind: 'minus' }, -Infinity);
    inFlight.set({ kind: 'tiny' }, 1e-7);
    inFlight.set({ kind: 'huge' }, 1e21);
    inFlight.set({ kind: 'sum' }, 0.1 + 0.2);
    inFlight.set({ kind: 'zero' }, -0);
    assert.equal(
      registry.expose(),
      lines(
        '# HELP in_flight In flight.',
        '# TYPE in_flight gauge',
        'in_flight{kind="huge"} 1e+21',
        'in_flight{kind="minus"} -Inf',
        'in_flight{kind="nan"} NaN',
        'in_flight{kind="plus"} +Inf',
        'in_flight{kind="request"} -1',
        'in_flight{kind="stream"} 2',
        'in_flight{kind="sum"} 0.30000000000000004',
        'in_flight{kind="tiny"} 1e-7',
        'in_flight{kind="zero"} 0',
      ),
    );
  });

  test('inc and dec refuse non-finite amounts, set a non-number; nothing is recorded', () => {
    const registry = createRegistry();
    const gauge = registry.gauge({ name: 'g', help: 'g' });
    assert.throws(() => gauge.inc({}, NaN), metricError('invalid_value'));
    assert.throws(() => gauge.dec({}, Infinity), metricError('invalid_value'));
    assert.throws(() => gauge.set({}, '1' as unknown as number), metricError('invalid_value'));
    gauge.inc({}, 0.5);
    assert.equal(registry.expose(), lines('# HELP g g', '# TYPE g gauge', 'g 0.5'));
  });

  test('collect is read at every scrape, checked, and refuses set/inc/dec', () => {
    const registry = createRegistry();
    let states: Array<[string, number]> = [['b', 2], ['a', 0]];
    let calls = 0;
    const circuit = registry.gauge({
      name: 'circuit_state',
      help: 'Circuit state.',
      labelNames: ['target'],
      collect: () => {
        calls++;
        return states.map(([target, value]) => ({ labels: { target }, value }));
      },
    });
    assert.equal(calls, 0);
    const header = lines('# HELP circuit_state Circuit state.', '# TYPE circuit_state gauge');
    assert.equal(registry.expose(), header + lines('circuit_state{target="a"} 0', 'circuit_state{target="b"} 2'));
    states = [['a', 1]];
    assert.equal(registry.expose(), header + lines('circuit_state{target="a"} 1'));
    assert.equal(calls, 2);
    assert.throws(() => circuit.set({ target: 'a' }, 1), metricError('collected_gauge', 'circuit_state'));
    assert.throws(() => circuit.inc({ target: 'a' }), metricError('collected_gauge'));
    assert.throws(() => circuit.dec({ target: 'a' }), metricError('collected_gauge'));

    states = [['a', 1], ['a', 2]];
    assert.throws(() => registry.expose(), metricError('duplicate_collected_series', 'circuit_state'));
  });

  test('collect output with the wrong labels or a non-number throws at scrape', () => {
    const wrongLabels = createRegistry();
    wrongLabels.gauge({ name: 'g', help: 'g', labelNames: ['target'], collect: () => [{ labels: { host: 'x' }, value: 1 }] });
    assert.throws(() => wrongLabels.expose(), metricError('label_mismatch', 'g'));
    const notNumber = createRegistry();
    notNumber.gauge({ name: 'g', help: 'g', collect: () => [{ labels: {}, value: '1' as unknown as number }] });
    assert.throws(() => notNumber.expose(), metricError('invalid_value', 'g'));
  });

  test('collected series beyond the cap fold into _other, last value wins', () => {
    const registry = createRegistry();
    registry.gauge({
      name: 'g',
      help: 'g',
      labelNames: ['target'],
      maxSeries: 2,
      collect: () => ['d', 'c', 'b', 'a'].map((target, value) => ({ labels: { target }, value })),
    });
    assert.equal(registry.expose(), lines('# HELP g g', '# TYPE g gauge', 'g{target="c"} 1', 'g{target="d"} 0', 'g{target="_other"} 3'));
  });
});

describe('histogram', () => {
  test('cumulative buckets with inclusive upper bounds, +Inf, _sum and _count', () => {
    const registry = createRegistry();
    const latency = registry.histogram({ name: 'latency_seconds', help: 'Latency.', labelNames: ['alias'], buckets: [0.05, 0.5, 1] });
    for (const value of [0.01, 0.05, 0.2, 1, 3]) latency.observe({ alias: 'big' }, value);
    latency.observe({ alias: 'a' }, 0.5);
    assert.equal(
      registry.expose(),
      lines(
        '# HELP latency_seconds Latency.',
        '# TYPE latency_seconds histogram',
        'latency_seconds_bucket{alias="a",le="0.05"} 0',
        'latency_seconds_bucket{alias="a",le="0.5"} 1',
        'latency_seconds_bucket{alias="a",le="1"} 1',
        'latency_seconds_bucket{alias="a",le="+Inf"} 1',
        'latency_seconds_sum{alias="a"} 0.5',
        'latency_seconds_count{alias="a"} 1',
        'latency_seconds_bucket{alias="big",le="0.05"} 2',
        'latency_seconds_bucket{alias="big",le="0.5"} 3',
        'latency_seconds_bucket{alias="big",le="1"} 4',
        'latency_seconds_bucket{alias="big",le="+Inf"} 5',
        'latency_seconds_sum{alias="big"} 4.26',
        'latency_seconds_count{alias="big"} 5',
      ),
    );
  });

  test('without labels: shown at zero from the start; a trailing +Inf bound is accepted', () => {
    const registry = createRegistry();
    const histogram = registry.histogram({ name: 'h', help: 'h', buckets: [0.001, 2.5, Infinity] });
    const zero = lines('# HELP h h', '# TYPE h histogram', 'h_bucket{le="0.001"} 0', 'h_bucket{le="2.5"} 0', 'h_bucket{le="+Inf"} 0', 'h_sum 0', 'h_count 0');
    assert.equal(registry.expose(), zero);
    histogram.observe({}, -1);
    histogram.observe({}, Infinity);
    assert.equal(
      registry.expose(),
      lines('# HELP h h', '# TYPE h histogram', 'h_bucket{le="0.001"} 1', 'h_bucket{le="2.5"} 1', 'h_bucket{le="+Inf"} 2', 'h_sum +Inf', 'h_count 2'),
    );
  });

  test('no finite bucket: only +Inf', () => {
    const registry = createRegistry();
    registry.histogram({ name: 'h', help: 'h', buckets: [] }).observe({}, 7);
    assert.equal(registry.expose(), lines('# HELP h h', '# TYPE h histogram', 'h_bucket{le="+Inf"} 1', 'h_sum 7', 'h_count 1'));
  });

  test('bad buckets, the le label and NaN are refused', () => {
    const registry = createRegistry();
    for (const buckets of [[1, 1], [2, 1], [NaN], [1, Infinity, 2], [-Infinity, 1], ['1' as unknown as number]]) {
      assert.throws(() => registry.histogram({ name: 'h', help: 'h', buckets }), metricError('invalid_buckets', 'h'), String(buckets));
    }
    assert.throws(() => registry.histogram({ name: 'h', help: 'h', buckets: [1], labelNames: ['alias', 'le'] }), metricError('reserved_label_name', 'h'));
    const histogram = registry.histogram({ name: 'h', help: 'h', buckets: [1] });
    assert.throws(() => histogram.observe({}, NaN), metricError('invalid_value', 'h'));
    assert.equal(registry.expose(), lines('# HELP h h', '# TYPE h histogram', 'h_bucket{le="1"} 0', 'h_bucket{le="+Inf"} 0', 'h_sum 0', 'h_count 0'));
  });

  test('le is an ordinary label name on other metric types', () => {
    const registry = createRegistry();
    registry.counter({ name: 'c', help: 'c', labelNames: ['le'] }).inc({ le: 'x' });
    assert.match(registry.expose(), /^c\{le="x"\} 1$/m);
  });
});

describe('escaping', () => {
  test('help escapes backslash and line feed only; label values also the double quote', () => {
    const registry = createRegistry();
    const counter = registry.counter({ name: 'c', help: 'Say "hi"\\ twice\nthen stop', labelNames: ['v'] });
    counter.inc({ v: 'a\\b' });
    counter.inc({ v: 'quote " here' });
    counter.inc({ v: 'line\nfeed' });
    counter.inc({ v: 'ünï\tcode\r' });
    assert.equal(
      registry.expose(),
      lines(
        '# HELP c Say "hi"\\\\ twice\\nthen stop',
        '# TYPE c counter',
        'c{v="a\\\\b"} 1',
        'c{v="line\\nfeed"} 1',
        'c{v="quote \\" here"} 1',
        'c{v="ünï\tcode\r"} 1',
      ),
    );
    const families = parsePrometheusText(registry.expose());
    assert.equal(families.get('c')?.help, 'Say "hi"\\ twice\nthen stop');
    assert.deepEqual(
      families.get('c')?.samples.map((sample) => sample.labels.v),
      ['a\\b', 'line\nfeed', 'quote " here', 'ünï\tcode\r'],
    );
  });

  test('distinct values that would collide if joined stay distinct series', () => {
    const registry = createRegistry();
    const counter = registry.counter({ name: 'c', help: 'c', labelNames: ['a', 'b'] });
    counter.inc({ a: 'x,y', b: 'z' });
    counter.inc({ a: 'x', b: 'y,z' });
    counter.inc({ a: 'x\u0000y', b: '' });
    counter.inc({ a: 'x', b: '\u0000y' });
    assert.equal(parsePrometheusText(registry.expose()).get('c')?.samples.length, 4);
  });
});

describe('series cap', () => {
  test('label sets beyond maxSeries fold into one _other series, never thrown', () => {
    const registry = createRegistry();
    const counter = registry.counter({ name: 'c_total', help: 'c', labelNames: ['alias', 'status'], maxSeries: 2 });
    counter.inc({ alias: 'z', status: '200' });
    counter.inc({ alias: 'a', status: '200' });
    counter.inc({ alias: 'b', status: '200' });
    counter.inc({ alias: 'c', status: '500' }, 2);
    counter.inc({ alias: 'z', status: '200' }); // an existing series still counts on its own
    counter.inc({ alias: OTHER_LABEL_VALUE, status: OTHER_LABEL_VALUE }); // the same label set as the fold
    assert.equal(
      registry.expose(),
      lines(
        '# HELP c_total c',
        '# TYPE c_total counter',
        'c_total{alias="a",status="200"} 1',
        'c_total{alias="z",status="200"} 2',
        'c_total{alias="_other",status="_other"} 4',
      ),
    );
    // Folding does not skip the label check: a wrong call is still a bug.
    assert.throws(() => counter.inc({ alias: 'new' }), metricError('label_mismatch'));
  });

  test('a real _other label set under the cap is a plain series, then also the fold target', () => {
    const registry = createRegistry();
    const counter = registry.counter({ name: 'c_total', help: 'c', labelNames: ['k'], maxSeries: 2 });
    counter.inc({ k: '_other' });
    counter.inc({ k: 'a' });
    counter.inc({ k: 'b' });
    assert.equal(registry.expose(), lines('# HELP c_total c', '# TYPE c_total counter', 'c_total{k="a"} 1', 'c_total{k="_other"} 2'));
    assert.doesNotThrow(() => parsePrometheusText(registry.expose()));
  });

  test('default cap of 1000 per metric, and a registry-wide default', () => {
    const registry = createRegistry();
    const counter = registry.counter({ name: 'c_total', help: 'c', labelNames: ['id'] });
    for (let i = 0; i < 1_500; i++) counter.inc({ id: String(i) });
    const samples = parsePrometheusText(registry.expose()).get('c_total')!.samples;
    assert.equal(samples.length, 1_001);
    assert.deepEqual(samples.at(-1), { name: 'c_total', labels: { id: '_other' }, value: 500 });

    const small = createRegistry({ maxSeries: 3 });
    const histogram = small.histogram({ name: 'h', help: 'h', labelNames: ['id'], buckets: [1] });
    for (let i = 0; i < 10; i++) histogram.observe({ id: String(i) }, i);
    const families = parsePrometheusText(small.expose());
    assert.equal(families.get('h')!.samples.length, 4 * 4);
    assert.equal(sampleValue(families, 'h_count', { id: '_other' }), 7);
    assert.equal(sampleValue(families, 'h_bucket', { id: '_other', le: '1' }), 0);
    assert.equal(sampleValue(families, 'h_sum', { id: '_other' }), 3 + 4 + 5 + 6 + 7 + 8 + 9);
  });

  test('maxSeries must be a positive integer', () => {
    for (const maxSeries of [0, -1, 1.5, NaN, Infinity]) {
      assert.throws(() => createRegistry().counter({ name: 'c', help: 'c', maxSeries }), metricError('invalid_max_series', 'c'), String(maxSeries));
      assert.throws(() => createRegistry({ maxSeries }), metricError('invalid_max_series', 'registry'), String(maxSeries));
    }
  });
});

describe('validation', () => {
  test('metric names follow the grammar', () => {
    const registry = createRegistry();
    for (const name of ['', '1abc', 'a-b', 'a b', 'ä', '__reserved', 'a.b']) {
      assert.throws(() => registry.counter({ name, help: 'h' }), metricError('invalid_metric_name'), JSON.stringify(name));
    }
    for (const name of ['a', '_a', ':a', 'a:b_c9', 'A']) assert.doesNotThrow(() => registry.counter({ name, help: 'h' }), name);
  });

  test('label names follow the grammar, once each', () => {
    const registry = createRegistry();
    for (const label of ['', '1a', 'a:b', 'a-b', '__name__', '__proto__']) {
      assert.throws(() => registry.gauge({ name: 'g', help: 'h', labelNames: [label] }), metricError('invalid_label_name', 'g'), JSON.stringify(label));
    }
    assert.throws(() => registry.gauge({ name: 'g', help: 'h', labelNames: ['a', 'b', 'a'] }), metricError('duplicate_label_name', 'g'));
    assert.throws(() => registry.gauge({ name: 'g', help: 7 as unknown as string }), metricError('invalid_help', 'g'));
    // None of the refused definitions took the name.
    assert.doesNotThrow(() => registry.gauge({ name: 'g', help: 'h', labelNames: ['_a', 'b9'] }));
  });

  test('no two metrics write the same sample name', () => {
    const registry = createRegistry();
    registry.counter({ name: 'x', help: 'x' });
    registry.counter({ name: 'y_count', help: 'y' });
    assert.throws(() => registry.counter({ name: 'x', help: 'again' }), metricError('duplicate_metric', 'x'));
    assert.throws(() => registry.gauge({ name: 'x', help: 'again' }), metricError('duplicate_metric', 'x'));
    assert.throws(() => registry.histogram({ name: 'x', help: 'again', buckets: [1] }), metricError('duplicate_metric', 'x'));
    assert.throws(() => registry.histogram({ name: 'y', help: 'y', buckets: [1] }), metricError('duplicate_metric', 'y'));
    registry.histogram({ name: 'z', help: 'z', buckets: [1] });
    for (const name of ['z_bucket', 'z_sum', 'z_count']) {
      assert.throws(() => registry.gauge({ name, help: 'g' }), metricError('duplicate_metric', name), name);
    }
  });

  test('a call with a missing, extra, renamed or non-string label throws', () => {
    const registry = createRegistry();
    const counter = registry.counter({ name: 'c', help: 'c', labelNames: ['alias', 'status'] });
    const histogram = registry.histogram({ name: 'h', help: 'h', labelNames: ['alias'], buckets: [1] });
    const gauge = registry.gauge({ name: 'g', help: 'g' });
    counter.inc({ alias: 'a', status: '200' });
    const wrong: Array<Record<string, unknown>> = [
      {},
      { alias: 'a' },
      { alias: 'a', status: '200', extra: 'x' },
      { alias: 'a', code: '200' },
      { alias: 'b', code: '200' },
      { alias: 'a', status: 200 },
      { alias: 'b', status: undefined },
    ];
    for (const labels of wrong) {
      assert.throws(() => counter.inc(labels as Record<string, string>), metricError('label_mismatch', 'c'), JSON.stringify(labels));
    }
    assert.throws(() => histogram.observe({}, 1), metricError('label_mismatch', 'h'));
    assert.throws(() => gauge.set({ alias: 'a' }, 1), metricError('label_mismatch', 'g'));
    assert.throws(() => counter.inc({ alias: 'a', status: '200', toString: 'x' }), /expected labels \[alias, status\] with string values, got \[alias, status, toString\]/);
    // Nothing was recorded by the refused calls.
    assert.equal(
      registry.expose(),
      lines(
        '# HELP c c',
        '# TYPE c counter',
        'c{alias="a",status="200"} 1',
        '# HELP h h',
        '# TYPE h histogram',
        '# HELP g g',
        '# TYPE g gauge',
        'g 0',
      ),
    );
  });
});

describe('round trip through the strict parser', () => {
  function populated(): Registry {
    const registry = createRegistry();
    const requests = registry.counter({ name: 'portcullis_requests_total', help: 'Requests.', labelNames: ['alias', 'status'] });
    const inFlight = registry.gauge({ name: 'portcullis_in_flight_requests', help: 'In flight.' });
    registry.gauge({
      name: 'portcullis_circuit_state',
      help: 'Circuit state per target: 0 closed, 1 half-open, 2 open.',
      labelNames: ['target'],
      collect: () => [{ labels: { target: 'openai/gpt-4o' }, value: 2 }],
    });
    const duration = registry.histogram({ name: 'portcullis_request_duration_seconds', help: 'Duration.', labelNames: ['alias'], buckets: [0.1, 1, 10] });
    requests.inc({ alias: 'fast', status: '200' }, 41);
    requests.inc({ alias: 'fast', status: '429' });
    requests.inc({ alias: 'we"ird\nalias\\', status: '200' });
    inFlight.inc({}, 3);
    duration.observe({ alias: 'fast' }, 0.25);
    duration.observe({ alias: 'fast' }, 12);
    return registry;
  }

  test('families in registration order, values readable with sampleValue', () => {
    const families = parsePrometheusText(populated().expose());
    assert.deepEqual(
      [...families].map(([name, family]) => [name, family.type, family.samples.length]),
      [
        ['portcullis_requests_total', 'counter', 3],
        ['portcullis_in_flight_requests', 'gauge', 1],
        ['portcullis_circuit_state', 'gauge', 1],
        ['portcullis_request_duration_seconds', 'histogram', 6],
      ],
    );
    assert.equal(families.get('portcullis_circuit_state')?.help, 'Circuit state per target: 0 closed, 1 half-open, 2 open.');
    assert.equal(sampleValue(families, 'portcullis_requests_total', { alias: 'fast', status: '200' }), 41);
    assert.equal(sampleValue(families, 'portcullis_requests_total', { status: '429', alias: 'fast' }), 1);
    assert.equal(sampleValue(families, 'portcullis_requests_total', { alias: 'we"ird\nalias\\', status: '200' }), 1);
    assert.equal(sampleValue(families, 'portcullis_requests_total', { alias: 'fast' }), undefined);
    assert.equal(sampleValue(families, 'portcullis_in_flight_requests'), 3);
    assert.equal(sampleValue(families, 'portcullis_circuit_state', { target: 'openai/gpt-4o' }), 2);
    assert.equal(sampleValue(families, 'portcullis_request_duration_seconds_bucket', { alias: 'fast', le: '1' }), 1);
    assert.equal(sampleValue(families, 'portcullis_request_duration_seconds_bucket', { alias: 'fast', le: '+Inf' }), 2);
    assert.equal(sampleValue(families, 'portcullis_request_duration_seconds_sum', { alias: 'fast' }), 12.25);
    assert.equal(sampleValue(families, 'portcullis_request_duration_seconds_count', { alias: 'fast' }), 2);
  });

  test('the same state gives the same text, scrape after scrape', () => {
    const registry = populated();
    assert.equal(registry.expose(), registry.expose());
    assert.equal(populated().expose(), registry.expose());
  });
});
