/**
 * MRTR over the wire against the demo server's fixtures: the capability gate (400/-32021 with
 * data.requiredCapabilities while uncommitted), inputResponses/requestState reaching the handler,
 * HMAC-checked state (tampering is -32602), and input_required on prompts/get.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createDemoServer } from '../../src/demo/demo-server.js';
import { type Served, serve } from '../../src/server/index.js';
import { modernBody, modernSend } from '../helpers/modern.js';

const CAPS = 'io.modelcontextprotocol/clientCapabilities';

describe('modern era: MRTR', () => {
  let s: Served;
  before(async () => {
    s = await serve({ createServer: () => createDemoServer(), port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    await s.close();
  });

  test('an input request the client cannot answer is 400/-32021 with data.requiredCapabilities', async () => {
    const r = await modernSend(
      s.url,
      modernBody('tools/call', { name: 'test_missing_capability', arguments: {} }, {}, 'g1'),
    );
    assert.equal(r.status, 400, r.text);
    const b = r.json();
    assert.equal(b.id, 'g1');
    assert.equal(b.error.code, -32021);
    assert.deepEqual(b.error.data.requiredCapabilities, { sampling: {} });
  });

  test('with the capability declared the result is input_required, and the retry completes', async () => {
    const caps = { [CAPS]: { sampling: {} } };
    const r1 = await modernSend(
      s.url,
      modernBody('tools/call', { name: 'test_missing_capability', arguments: {} }, caps),
    );
    assert.equal(r1.status, 200, r1.text);
    const res = r1.json().result;
    assert.equal(res.resultType, 'input_required');
    assert.equal(res.inputRequests.probe.method, 'sampling/createMessage');
    assert.equal(res.content, undefined, 'no empty content on input_required');
    const r2 = await modernSend(
      s.url,
      modernBody(
        'tools/call',
        {
          name: 'test_missing_capability',
          arguments: {},
          inputResponses: {
            probe: { role: 'assistant', content: { type: 'text', text: 'hello' }, model: 'm' },
          },
        },
        caps,
      ),
    );
    assert.equal(r2.json().result.content[0].text, 'sampled: hello');
    assert.equal(r2.json().result.resultType, 'complete');
  });

  test('requestState round-trips through the handler; a tampered one is a -32602 error', async () => {
    const caps = { [CAPS]: { elicitation: {} } };
    const name = 'test_input_required_result_tampered_state';
    const r1 = (await modernSend(s.url, modernBody('tools/call', { name, arguments: {} }, caps))).json()
      .result;
    assert.equal(typeof r1.requestState, 'string');
    const answer = { confirm: { action: 'accept', content: { ok: true } } };
    const good = await modernSend(
      s.url,
      modernBody(
        'tools/call',
        { name, arguments: {}, inputResponses: answer, requestState: r1.requestState },
        caps,
      ),
    );
    assert.equal(good.json().result.content[0].text, 'state verified');
    const bad = await modernSend(
      s.url,
      modernBody(
        'tools/call',
        { name, arguments: {}, inputResponses: answer, requestState: `${r1.requestState}A` },
        caps,
        't2',
      ),
    );
    assert.equal(bad.status, 200);
    assert.equal(bad.json().id, 't2');
    assert.equal(bad.json().error.code, -32602);
  });

  test('prompts/get may return input_required too', async () => {
    const caps = { [CAPS]: { elicitation: {} } };
    const r = await modernSend(
      s.url,
      modernBody('prompts/get', { name: 'test_input_required_result_prompt' }, caps),
    );
    assert.equal(r.json().result.resultType, 'input_required');
    const r2 = await modernSend(
      s.url,
      modernBody(
        'prompts/get',
        {
          name: 'test_input_required_result_prompt',
          inputResponses: { user_context: { action: 'accept', content: { context: 'ctx' } } },
        },
        caps,
      ),
    );
    assert.match(r2.json().result.messages[0].content.text, /ctx/);
  });
});
