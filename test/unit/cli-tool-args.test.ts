// `sluice call --arg` coercion by a tool's inputSchema: each JSON Schema type, nullable types, unknown
// properties (heuristic), and errors that name the argument.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageError } from '../../src/cli/connect.js';
import { coerceArgs, coerceBySchema, requireArgs } from '../../src/cli/tool-args.js';

test('each schema type gets the value it names', () => {
  assert.equal(coerceBySchema('a', '5', { type: 'string' }), '5');
  assert.equal(coerceBySchema('a', 'true', { type: 'string' }), 'true');
  assert.equal(coerceBySchema('a', '2.5', { type: 'number' }), 2.5);
  assert.equal(coerceBySchema('a', '-3', { type: 'integer' }), -3);
  assert.equal(coerceBySchema('a', 'false', { type: 'boolean' }), false);
  assert.equal(coerceBySchema('a', 'null', { type: 'null' }), null);
  assert.deepEqual(coerceBySchema('a', '{"x":[1]}', { type: 'object' }), { x: [1] });
  assert.deepEqual(coerceBySchema('a', '[1,"b"]', { type: 'array' }), [1, 'b']);
  assert.equal(coerceBySchema('a', '7', { type: ['string', 'null'] }), '7');
});

test('without a usable type, the heuristic applies', () => {
  assert.equal(coerceBySchema('a', '7', undefined), 7);
  assert.equal(coerceBySchema('a', 'true', {}), true);
  assert.equal(coerceBySchema('a', 'x', { anyOf: [{ type: 'string' }, { type: 'number' }] }), 'x');
  assert.equal(coerceBySchema('a', '{oops', undefined), '{oops');
});

test('a value that cannot be of the type is a UsageError naming the arg', () => {
  for (const [value, schema, what] of [
    ['abc', { type: 'number' }, 'a number'],
    ['', { type: 'number' }, 'a number'],
    ['1.5', { type: 'integer' }, 'an integer'],
    ['yes', { type: 'boolean' }, 'true or false'],
    ['[1]', { type: 'object' }, 'a JSON object'],
    ['{"a":1}', { type: 'array' }, 'a JSON array'],
    ['{oops', { type: 'object' }, 'a JSON object'],
  ] as const) {
    assert.throws(
      () => coerceBySchema('count', value, schema),
      (e: unknown) =>
        e instanceof UsageError && e.message === `--arg count: the tool expects ${what}, got '${value}'`,
      `${value} as ${JSON.stringify(schema)}`,
    );
  }
});

test('coerceArgs reads properties from the tool inputSchema; a key it does not list is a usage error', () => {
  const tool = {
    name: 't',
    inputSchema: {
      type: 'object' as const,
      properties: { text: { type: 'string' }, n: { type: 'integer' } },
      required: ['n'],
    },
  };
  assert.deepEqual(
    coerceArgs(
      [
        ['text', '5'],
        ['n', '6'],
      ],
      tool,
    ),
    { text: '5', n: 6 },
  );
  assert.throws(
    () => coerceArgs([['other', '7']], tool),
    (e: unknown) =>
      e instanceof UsageError &&
      e.message === "--arg other: the tool 't' has no parameter 'other'; its parameters: n [text]",
  );
  // toString is not a property of the schema, even though it is on every object's prototype.
  assert.throws(() => coerceArgs([['toString', '1']], tool), UsageError);
  // A schema that allows more, or a tool the server did not list: unknown keys use the heuristic.
  const open = { ...tool, inputSchema: { ...tool.inputSchema, additionalProperties: true } };
  assert.deepEqual(coerceArgs([['other', '7']], open), { other: 7 });
  assert.deepEqual(coerceArgs([['other', '7']], undefined), { other: 7 });
});

test('requireArgs: a required parameter left out is a usage error naming it and the --arg to add', () => {
  const tool = {
    name: 'echo',
    inputSchema: {
      type: 'object' as const,
      properties: { text: { type: 'string' }, n: { type: 'integer' }, opt: { type: 'string' } },
      required: ['text', 'n'],
    },
  };
  assert.throws(
    () => requireArgs({ n: 1 }, tool),
    (e: unknown) =>
      e instanceof UsageError &&
      e.message ===
        "the tool 'echo' needs the parameter 'text': add --arg text=…; its parameters: text n [opt]",
  );
  assert.throws(
    () => requireArgs({}, tool),
    (e: unknown) =>
      e instanceof UsageError &&
      e.message ===
        "the tool 'echo' needs the parameters 'text', 'n': add --arg text=… --arg n=…; its parameters: text n [opt]",
  );
  // Given (from --args or --arg, null included), or a tool the server did not list: nothing to say.
  requireArgs({ text: 'a', n: null }, tool);
  requireArgs({}, undefined);
});
