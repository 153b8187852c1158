/**
 * http/param-headers.ts, the one owner of `x-mcp-header` declarations and `Mcp-Param-*` values for the
 * client and the server (MCP 2026-07-28 basic/transports/streamable-http §"Custom Headers from Tool
 * Parameters", §"Value Encoding", §"Server Validation"): the declaration rules, and properties over the
 * encoding — what the client sends for an argument, the server (same module) accepts for that argument and
 * refuses for any other.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  checkParamHeaderValues,
  decodeHeaderValue,
  encodeHeaderValue,
  type ParamHeaderDecl,
  paramHeaderDecls,
  paramHeadersFor,
  paramHeaderText,
} from '../../src/http/param-headers.js';

const schema = (properties: Record<string, unknown>) => ({ type: 'object', properties });
const names = (s: unknown) => {
  const r = paramHeaderDecls(s);
  assert.ok(r.ok, `expected valid declarations, got ${r.ok ? '' : r.reason}`);
  return r.decls.map((d) => `${d.name}@${d.path.join('.')}`);
};
const invalid = (s: unknown, why: RegExp) => {
  const r = paramHeaderDecls(s);
  assert.equal(r.ok, false, 'expected the tool definition to be invalid');
  if (!r.ok) assert.match(r.reason, why);
};

/** A string a JSON body can carry and UTF-8 can round-trip (no lone surrogates). */
const unit = fc.oneof(
  fc.constantFrom('\t', ' ', '\n', '\r', '\u0000', 'é', '世', '😀', '=?base64?', '?='),
  fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  fc
    .integer({ min: 0, max: 0x10ffff })
    .filter((c) => c < 0xd800 || c > 0xdfff)
    .map((c) => String.fromCodePoint(c)),
);
const wellFormed = (max = 40) => fc.array(unit, { maxLength: max }).map((units) => units.join(''));

const lookup = (h: Record<string, string>) => (n: string) => h[n];

describe('http/param-headers: declarations (§"Schema Extension")', () => {
  test('string, integer and boolean properties reached through properties keys count, nested ones too', () => {
    assert.deepEqual(
      names(
        schema({
          region: { type: 'string', 'x-mcp-header': 'Region' },
          count: { type: 'integer', 'x-mcp-header': 'Count' },
          dry: { type: ['boolean', 'null'], 'x-mcp-header': 'Dry-Run' },
          target: { type: 'object', properties: { zone: { type: 'string', 'x-mcp-header': 'Zone' } } },
          plain: { type: 'string' },
        }),
      ),
      ['Region@region', 'Count@count', 'Dry-Run@dry', 'Zone@target.zone'],
    );
    assert.deepEqual(names({ type: 'object' }), []);
    assert.deepEqual(names(undefined), []);
  });

  test('a number property, a bad name, a case-duplicate or an unreachable annotation invalidates the tool', () => {
    invalid(schema({ amount: { type: 'number', 'x-mcp-header': 'Amount' } }), /not typed string, integer/);
    invalid(schema({ data: { type: 'object', 'x-mcp-header': 'Data' } }), /not typed/);
    invalid(schema({ untyped: { 'x-mcp-header': 'Untyped' } }), /not typed/);
    invalid(schema({ v: { type: 'string', 'x-mcp-header': '' } }), /token/);
    invalid(schema({ v: { type: 'string', 'x-mcp-header': 'My Region' } }), /token/);
    invalid(schema({ v: { type: 'string', 'x-mcp-header': 'Region:1' } }), /token/);
    invalid(schema({ v: { type: 'string', 'x-mcp-header': 'Région' } }), /token/);
    invalid(schema({ v: { type: 'string', 'x-mcp-header': 7 } }), /token/);
    invalid(
      schema({
        a: { type: 'string', 'x-mcp-header': 'MyField' },
        b: { type: 'string', 'x-mcp-header': 'myfield' },
      }),
      /declared twice/,
    );
    invalid(
      schema({ list: { type: 'array', items: { type: 'string', 'x-mcp-header': 'Item' } } }),
      /reached/,
    );
    invalid({ ...schema({}), anyOf: [schema({ a: { type: 'string', 'x-mcp-header': 'A' } })] }, /reached/);
    invalid({ ...schema({}), $defs: { a: { type: 'string', 'x-mcp-header': 'A' } } }, /reached/);
    invalid({ type: 'string', 'x-mcp-header': 'Root' }, /reached/);
    // One bad annotation invalidates the good ones too.
    invalid(
      schema({ ok: { type: 'string', 'x-mcp-header': 'Ok' }, n: { type: 'number', 'x-mcp-header': 'N' } }),
      /not typed/,
    );
  });

  test('an x-mcp-header key inside instance data (default, const, enum, examples) is no annotation', () => {
    assert.deepEqual(
      names(
        schema({
          o: { type: 'object', default: { 'x-mcp-header': 'X' }, examples: [{ 'x-mcp-header': 1 }] },
        }),
      ),
      [],
    );
  });

  test('a schema nested without bound is refused, not walked without bound', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 100; i++) deep = { type: 'object', properties: { a: deep } };
    invalid(deep, /deeper/);
  });
});

describe('http/param-headers: value encoding (§"Value Encoding")', () => {
  test('the spec examples', () => {
    assert.equal(encodeHeaderValue('us-west1'), 'us-west1');
    assert.equal(encodeHeaderValue('Hello, 世界'), '=?base64?SGVsbG8sIOS4lueVjA==?=');
    assert.equal(encodeHeaderValue(' padded '), '=?base64?IHBhZGRlZCA=?=');
    assert.equal(encodeHeaderValue('line1\nline2'), '=?base64?bGluZTEKbGluZTI=?=');
    assert.equal(encodeHeaderValue('=?base64?literal?='), '=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=');
  });

  test('the empty value and a tab travel as the sentinel, and decode back', () => {
    assert.equal(encodeHeaderValue(''), '=?base64??=');
    assert.deepEqual(decodeHeaderValue('=?base64??='), { ok: true, value: '' });
    assert.equal(encodeHeaderValue('a\tb'), '=?base64?YQli?=');
    assert.deepEqual(decodeHeaderValue(encodeHeaderValue('\tlead')), { ok: true, value: '\tlead' });
  });

  test('type conversion: strings as they are, booleans lower-case, integers digit for digit', () => {
    assert.equal(paramHeaderText('x'), 'x');
    assert.equal(paramHeaderText(true), 'true');
    assert.equal(paramHeaderText(false), 'false');
    assert.equal(paramHeaderText(-7), '-7');
    assert.equal(paramHeaderText(2 ** 53 + 2), '9007199254740994');
    assert.equal(paramHeaderText(1e21), '1000000000000000000000');
    assert.equal(paramHeaderText(null), undefined);
    assert.equal(paramHeaderText(undefined), undefined);
    assert.equal(paramHeaderText({ a: 1 }), undefined);
  });

  test('round trip: every well-formed string encodes to a safe field value that decodes to it (property)', () => {
    fc.assert(
      fc.property(wellFormed(), (s) => {
        const enc = encodeHeaderValue(s);
        // What HTTP carries unchanged: visible ASCII and interior spaces, nothing a field parser strips.
        assert.match(enc, /^(?:[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)$/);
        assert.deepEqual(decodeHeaderValue(enc), { ok: true, value: s });
        // Received with optional whitespace around it: the same value.
        assert.deepEqual(decodeHeaderValue(` \t${enc}\t `), { ok: true, value: s });
      }),
      { numRuns: 3000 },
    );
  });

  test('values with a tab, a control character or non-ASCII always go as the sentinel (property)', () => {
    fc.assert(
      fc.property(
        wellFormed(12),
        fc.constantFrom('\t', '\u0001', '\u007f', 'ß', '世', '😀'),
        wellFormed(12),
        (a, c, b) => {
          const s = `${a}${c}${b}`;
          assert.ok(encodeHeaderValue(s).startsWith('=?base64?'), JSON.stringify(s));
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('http/param-headers: what the client sends, the server accepts (§"Server Validation")', () => {
  const decls: ParamHeaderDecl[] = [
    { name: 'Region', path: ['region'] },
    { name: 'Count', path: ['count'] },
    { name: 'Dry', path: ['dry'] },
    { name: 'Zone', path: ['target', 'zone'] },
  ];
  const primitive = fc.oneof(
    wellFormed(),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    // Integers beyond the safe range: the decimal text names the same double on both sides.
    fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map((b) => Number(b)),
    fc.constant(null),
  );
  const args = fc.record(
    { region: primitive, count: primitive, dry: primitive, target: fc.record({ zone: primitive }) },
    { requiredKeys: [] },
  );

  test('the headers the client derives pass the server check, whatever the arguments (property)', () => {
    fc.assert(
      fc.property(args, (a) => {
        const headers = paramHeadersFor(decls, a);
        assert.equal(checkParamHeaderValues(decls, a, lookup(headers)), undefined, JSON.stringify(headers));
        // Null and absent arguments have no header.
        if (a.region === null || a.region === undefined) assert.equal(headers['mcp-param-region'], undefined);
      }),
      { numRuns: 3000 },
    );
  });

  test('a header for a different value, or a missing one, is refused (property)', () => {
    fc.assert(
      fc.property(primitive, primitive, (sent, body) => {
        const st = paramHeaderText(sent);
        // The header carries text: values of other types with the same text (`true` and "true", 42 and "42.0")
        // are the same header, and numbers compare numerically.
        fc.pre(body !== null && st !== paramHeaderText(body));
        fc.pre(!(typeof body === 'number' && st !== undefined && Number(st) === body));
        const headers = paramHeadersFor(decls, { region: sent });
        const problem = checkParamHeaderValues(decls, { region: body }, lookup(headers));
        assert.ok(problem !== undefined, `${JSON.stringify(sent)} accepted for ${JSON.stringify(body)}`);
        assert.equal(problem.header, 'Mcp-Param-Region');
        assert.equal(problem.problem, sent === null ? 'missing' : 'mismatch');
      }),
      { numRuns: 3000 },
    );
  });

  test('integers compare numerically; malformed sentinels are malformed', () => {
    const d: ParamHeaderDecl[] = [{ name: 'N', path: ['n'] }];
    assert.equal(checkParamHeaderValues(d, { n: 42 }, lookup({ 'mcp-param-n': '42.0' })), undefined);
    assert.equal(
      checkParamHeaderValues(d, { n: 42 }, lookup({ 'mcp-param-n': '0x2a' }))?.problem,
      'mismatch',
    );
    assert.equal(
      checkParamHeaderValues(d, { n: 'a' }, lookup({ 'mcp-param-n': '=?base64?YQ?=' }))?.problem,
      'malformed',
    );
    assert.equal(checkParamHeaderValues(d, { n: 'a' }, lookup({}))?.problem, 'missing');
    assert.equal(checkParamHeaderValues(d, { n: null }, lookup({})), undefined);
  });
});
