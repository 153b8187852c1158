// jsonrpc/initialize-params.ts: the required members of initialize params, checked before a server
// is built. A property test holds it to the rule read off the schema, over arbitrary JSON.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { initializeParamsProblem } from '../../src/jsonrpc/initialize-params.js';

const obj = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The rule as the schema states it (InitializeRequestParams, Implementation). */
function wellFormed(p: unknown): boolean {
  if (!obj(p) || typeof p['protocolVersion'] !== 'string' || !obj(p['capabilities'])) return false;
  const info = p['clientInfo'];
  return obj(info) && typeof info['name'] === 'string' && typeof info['version'] === 'string';
}

test('accepts exactly the params whose required members have their types, extra members included', () => {
  const member = fc.oneof(fc.jsonValue(), fc.string(), fc.dictionary(fc.string(), fc.jsonValue()));
  const params = fc.oneof(
    fc.jsonValue(),
    fc.record(
      {
        protocolVersion: member,
        capabilities: member,
        clientInfo: fc.oneof(member, fc.record({ name: member, version: member }, { requiredKeys: [] })),
        extra: fc.jsonValue(),
      },
      { requiredKeys: [] },
    ),
  );
  fc.assert(
    fc.property(params, (p) => {
      const problem = initializeParamsProblem(p);
      assert.equal(problem === undefined, wellFormed(p), JSON.stringify(p));
      if (problem !== undefined)
        assert.match(problem, /must be (a string|an object|an object with a string name and version)$/);
    }),
    { numRuns: 2000 },
  );
});

test('names the first member that is wrong', () => {
  assert.equal(initializeParamsProblem(undefined), 'initialize params must be an object');
  assert.equal(initializeParamsProblem([]), 'initialize params must be an object');
  assert.equal(initializeParamsProblem({ protocolVersion: 42 }), 'params.protocolVersion must be a string');
  assert.equal(
    initializeParamsProblem({ protocolVersion: 'v', capabilities: null }),
    'params.capabilities must be an object',
  );
  assert.equal(
    initializeParamsProblem({
      protocolVersion: 'v',
      capabilities: {},
      clientInfo: { name: 'n', version: 1 },
    }),
    'params.clientInfo must be an object with a string name and version',
  );
  assert.equal(
    initializeParamsProblem({
      protocolVersion: 'v',
      capabilities: {},
      clientInfo: { name: 'n', version: '1' },
    }),
    undefined,
  );
});
