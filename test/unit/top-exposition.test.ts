// The Prometheus text parser behind `sluice top`: random expositions written with odd spacing,
// escapes in label values and HELP text, special float spellings and timestamps parse back to what
// was written, whatever the chunk split; Sluice's own exposition parses; anything else (HTML, JSON,
// a bad escape, a torn label set) is an ExpositionError naming the line, never another exception.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  type Exposition,
  ExpositionError,
  ExpositionParser,
  parseExposition,
  parseValue,
} from '../../src/cli/top/exposition.js';
import { createDemoServer } from '../../src/demo/demo-server.js';
import { createMcpHandler } from '../../src/server/create-handler.js';
import { cutAt } from '../helpers/pieces.js';

interface Written {
  name: string;
  labels: [string, string][];
  value: number;
}

const nameArb = fc.stringMatching(/^[a-zA-Z_:][a-zA-Z0-9_:]{0,12}$/);
const labelNameArb = fc.stringMatching(/^[a-zA-Z_][a-zA-Z0-9_]{0,8}$/);
// Any text, weighted towards the characters the format escapes.
const labelValueArb = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc
    .array(fc.constantFrom('\\', '"', '\n', 'a', ' ', '{', '}', ',', '=', 'é', '#'), { maxLength: 10 })
    .map((a) => a.join('')),
);
const valueArb = fc.oneof(
  fc.double(),
  fc.integer({ min: -1e9, max: 1e9 }),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 0, -0),
);
const sampleArb: fc.Arbitrary<Written> = fc.record({
  name: nameArb,
  labels: fc.uniqueArray(fc.tuple(labelNameArb, labelValueArb), { maxLength: 4, selector: (t) => t[0] }),
  value: valueArb,
});
const blanksArb = fc.array(fc.constantFrom(' ', '\t'), { minLength: 1, maxLength: 3 }).map((a) => a.join(''));
const optBlanksArb = fc.array(fc.constantFrom(' ', '\t'), { maxLength: 2 }).map((a) => a.join(''));

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function spell(v: number, style: number): string {
  if (Number.isNaN(v)) return ['NaN', 'nan', 'NaN'][style % 3] as string;
  if (v === Number.POSITIVE_INFINITY) return ['+Inf', 'Inf', '+inf'][style % 3] as string;
  if (v === Number.NEGATIVE_INFINITY) return ['-Inf', '-inf', '-Inf'][style % 3] as string;
  if (Object.is(v, -0)) return '-0';
  return style % 2 === 0 ? String(v) : v.toExponential();
}

/** One sample line, with blanks where the format allows them and the optional parts chosen by `pick`. */
const lineArb = (s: Written) =>
  fc
    .record({
      b: fc.array(optBlanksArb, { minLength: 12, maxLength: 12 }),
      sep: blanksArb,
      tsSep: blanksArb,
      lead: optBlanksArb,
      trailingComma: fc.boolean(),
      emptyBraces: fc.boolean(),
      timestamp: fc.option(fc.integer({ min: -1e12, max: 1e13 }), { nil: undefined }),
      style: fc.nat(5),
      crlf: fc.boolean(),
    })
    .map((o) => {
      const b = (i: number): string => o.b[i % o.b.length] as string;
      let labels = '';
      if (s.labels.length > 0 || o.emptyBraces) {
        const parts = s.labels.map(
          ([k, v], i) => `${b(i)}${k}${b(i + 1)}=${b(i + 2)}"${escapeLabel(v)}"${b(i + 3)}`,
        );
        labels = `${b(4)}{${parts.join(',')}${o.trailingComma && parts.length > 0 ? ',' : ''}${b(5)}}`;
      }
      const ts = o.timestamp === undefined ? '' : `${o.tsSep}${o.timestamp}`;
      return `${o.lead}${s.name}${labels}${o.sep}${spell(s.value, o.style)}${ts}${b(6)}${o.crlf ? '\r' : ''}\n`;
    });

const documentArb = fc
  .array(sampleArb, { maxLength: 8 })
  .chain((samples) =>
    fc
      .tuple(
        ...samples.map((s) =>
          fc.tuple(
            lineArb(s),
            fc.constantFrom('', '\n', '# a comment\n', '  \t\n', '#\n', '# HELP x_y a \\\\ b \\n c\n'),
          ),
        ),
      )
      .map((lines) => ({ samples, text: lines.map(([l, extra]) => extra + l).join('') })),
  );

/** Splits `text` at random points (including inside escapes, CRLF pairs and multi-byte runs). */
const splitArb = (text: string) =>
  fc.uniqueArray(fc.nat(Math.max(0, text.length)), { maxLength: 12 }).map((cuts) => cutAt(text, cuts));

function parseChunks(chunks: readonly string[]): Exposition {
  const p = new ExpositionParser();
  for (const c of chunks) p.push(c);
  return p.end();
}

function plain(e: Exposition) {
  return e.samples.map((s) => ({ name: s.name, labels: { ...s.labels }, value: s.value }));
}

function expected(samples: readonly Written[]) {
  return samples.map((s) => ({ name: s.name, labels: Object.fromEntries(s.labels), value: s.value }));
}

describe('sluice top: Prometheus text parser', () => {
  test('written samples parse back, whatever the spacing, escapes, spellings and chunk split', () => {
    fc.assert(
      fc.property(
        documentArb.chain((d) => fc.tuple(fc.constant(d), splitArb(d.text))),
        ([d, chunks]) => {
          const whole = plain(parseExposition(d.text));
          assert.deepStrictEqual(whole, expected(d.samples));
          assert.deepStrictEqual(plain(parseChunks(chunks)), whole);
        },
      ),
      { numRuns: 400 },
    );
  });

  test('any text either parses or fails with an ExpositionError, the same for every chunk split', () => {
    const textArb = fc.oneof(
      fc.string({ maxLength: 80 }),
      fc
        .array(
          fc.constantFrom(
            'a_b',
            '{',
            '}',
            '"',
            '\\',
            '=',
            ',',
            ' ',
            '\t',
            '\n',
            '1',
            'NaN',
            '#',
            ' HELP ',
            ' TYPE ',
            'counter',
            'x="y"',
          ),
          { maxLength: 30 },
        )
        .map((a) => a.join('')),
    );
    fc.assert(
      fc.property(
        textArb.chain((t) => fc.tuple(fc.constant(t), splitArb(t))),
        ([text, chunks]) => {
          const outcome = (f: () => Exposition): string => {
            try {
              return JSON.stringify(plain(f()));
            } catch (e) {
              assert.ok(e instanceof ExpositionError, `threw ${String(e)}`);
              return `error ${e.message}`;
            }
          };
          assert.equal(
            outcome(() => parseChunks(chunks)),
            outcome(() => parseExposition(text)),
          );
        },
      ),
      { numRuns: 600 },
    );
  });

  test("Sluice's own exposition (a live handler's, with a cluster-free demo server) parses", async () => {
    const handler = createMcpHandler({ createServer: () => createDemoServer() });
    try {
      const e = parseExposition(handler.metrics());
      assert.equal(e.types.get('sluice_write_stall_seconds'), 'histogram');
      assert.equal(e.types.get('sluice_sessions_active'), 'gauge');
      assert.equal(e.help.get('sluice_sessions_active'), 'Sessions currently held.');
      const inf = e.samples.find(
        (s) => s.name === 'sluice_write_stall_seconds_bucket' && s.labels['le'] === '+Inf',
      );
      assert.deepStrictEqual({ ...inf?.labels }, { le: '+Inf' });
      assert.equal(inf?.value, 0);
      assert.ok(e.samples.length > 50, `only ${e.samples.length} samples`);
    } finally {
      await handler.close();
    }
  });

  test('HELP text is unescaped; a label named __proto__ is data; other comments are ignored', () => {
    const e = parseExposition(
      '# HELP m a\\\\b\\nc\n# TYPE m counter\n# just a comment\nm{__proto__="x",constructor="y"} 1 1700000000000\n',
    );
    assert.equal(e.help.get('m'), 'a\\b\nc');
    assert.equal(e.types.get('m'), 'counter');
    assert.deepEqual(Object.entries(e.samples[0]?.labels ?? {}), [
      ['__proto__', 'x'],
      ['constructor', 'y'],
    ]);
    assert.equal(Object.getPrototypeOf(e.samples[0]?.labels), null);
  });

  test('what is not the format fails with the line that broke it', () => {
    const cases: [string, RegExp][] = [
      ['<!doctype html>\n<html><body>hi</body></html>\n', /line 1: expected a metric name/],
      ['{"jsonrpc":"2.0","id":1}\n', /line 1: expected a metric name/],
      ['ok 1\nm{a="\\x"} 1\n', /line 2: bad escape/],
      ['m{a="b} 1\n', /line 1: unterminated value/],
      ['m{a="b"', /line 1: unterminated|expected ','/],
      ['m{a="1",a="2"} 1\n', /label a given twice/],
      ['m 1 2 3\n', /unexpected "3"/],
      ['m one\n', /bad value "one"/],
      ['m\n', /m has no value/],
      ['m 1 1.5\n', /bad timestamp/],
      ['# TYPE m countr\n', /unknown type 'countr'/],
      ['# TYPE m counter\n# TYPE m gauge\n', /second # TYPE/],
      ['m{1a="x"} 1\n', /expected a label name/],
      ['m{a "x"} 1\n', /expected '='/],
      [`m ${'1'.repeat(70_000)}`, /line too long/],
    ];
    for (const [text, re] of cases) {
      assert.throws(
        () => parseExposition(text),
        (e: unknown) => e instanceof ExpositionError && re.test(e.message),
        text.slice(0, 40),
      );
    }
  });

  test('values: the spellings Go accepts', () => {
    assert.equal(parseValue('+Inf'), Number.POSITIVE_INFINITY);
    assert.equal(parseValue('-inf'), Number.NEGATIVE_INFINITY);
    assert.ok(Number.isNaN(parseValue('NaN')));
    assert.equal(parseValue('1.5e3'), 1500);
    assert.equal(parseValue('.5'), 0.5);
    assert.equal(parseValue('7.'), 7);
    assert.equal(parseValue('0x10'), undefined);
    assert.equal(parseValue(''), undefined);
    assert.equal(parseValue('1_000'), undefined);
  });
});
