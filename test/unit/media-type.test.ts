import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { isJsonContentType, parseAccept, parseContentType } from '../../src/http/media-type.js';

describe('http/media-type Content-Type', () => {
  const table: [string | undefined, boolean][] = [
    ['application/json', true],
    ['Application/JSON', true],
    ['application/json; charset=utf-8', true],
    ['application/json;charset=UTF-8', true],
    ['application/json; charset="utf-8"', true],
    ['application/json; charset=utf8', true],
    ['application/json ; foo=bar', true],
    ['  application/json  ', true],
    ['application/json; charset=latin1', false],
    ['application/json; charset=utf-16', false],
    ['application/json; charset=iso-8859-1', false],
    ['application/jsonx', false],
    ['application/json-seq', false],
    ['application/x-json', false],
    ['text/json', false],
    ['text/plain', false],
    ['application/json+ld', false],
    ['application/*', false],
    ['*/*', false],
    ['', false],
    [undefined, false],
    ['application', false],
    ['application/json, text/plain', false],
    ['multipart/form-data; boundary=x', false],
  ];
  for (const [h, ok] of table) {
    test(`isJsonContentType(${JSON.stringify(h)}) === ${ok}`, () => {
      assert.equal(isJsonContentType(h), ok);
    });
  }

  test('parseContentType lower-cases type and charset, and rejects garbage', () => {
    assert.deepEqual(parseContentType('Application/Json; Charset=UTF-8'), {
      type: 'application/json',
      charset: 'utf-8',
    });
    assert.deepEqual(parseContentType('text/plain'), { type: 'text/plain' });
    assert.equal(parseContentType('no slash'), undefined);
    assert.equal(parseContentType('a/b/c'), undefined);
    assert.equal(parseContentType(undefined), undefined);
  });

  test('never throws (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        parseContentType(s);
        isJsonContentType(s);
        parseAccept(s);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('http/media-type Accept', () => {
  const table: [string | undefined, { json: boolean; sse: boolean }][] = [
    [undefined, { json: true, sse: true }],
    ['', { json: true, sse: true }],
    ['application/json, text/event-stream', { json: true, sse: true }],
    ['text/event-stream, application/json', { json: true, sse: true }],
    ['application/json', { json: true, sse: false }],
    ['text/event-stream', { json: false, sse: true }],
    ['*/*', { json: true, sse: true }],
    ['application/*', { json: true, sse: false }],
    ['text/*', { json: false, sse: true }],
    ['text/html', { json: false, sse: false }],
    ['text/html, image/*', { json: false, sse: false }],
    ['APPLICATION/JSON, TEXT/EVENT-STREAM', { json: true, sse: true }],
    ['application/json; charset=utf-8', { json: true, sse: false }],
    ['application/json;q=0.5, text/event-stream;q=0.9', { json: true, sse: true }],
    ['application/json;q=0, text/event-stream', { json: false, sse: true }],
    ['text/event-stream;q=0, application/json', { json: true, sse: false }],
    ['*/*;q=0', { json: false, sse: false }],
    ['*/*, application/json;q=0', { json: false, sse: true }],
    ['*/*;q=0, application/json', { json: true, sse: false }],
    ['text/*;q=0, */*', { json: true, sse: false }],
    ['application/json;q=0.000', { json: false, sse: false }],
    ['application/json;q=1.0', { json: true, sse: false }],
    ['application/json; Q=0', { json: false, sse: false }],
    ['application/json;q=abc', { json: false, sse: false }],
    ['application/json;q=2', { json: false, sse: false }],
    ['application/json;q=-1', { json: false, sse: false }],
    ['application/jsonx, text/event-streamx', { json: false, sse: false }],
    [' , ,, ', { json: false, sse: false }],
    ['application/json;level=1;q=0.3', { json: true, sse: false }],
  ];
  for (const [h, want] of table) {
    test(`parseAccept(${JSON.stringify(h)})`, () => {
      assert.deepEqual(parseAccept(h), want);
    });
  }
});
