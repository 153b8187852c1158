// Loaded into every test file's process by scripts/run-tests.mjs (`--require`, which node's runner passes
// on to each file's process): node:test without its process-wide async hook.
//
// Node 20's test harness (lib/internal/test_runner/harness.js, `setup`) enables an async hook with `init`
// and `destroy` for the whole life of a test process. Its one use that matters here is a map from each
// test's (and suite's) async id to the test, so a test() called inside a describe() body finds its suite.
// But an enabled hook calls `init` for every promise, and a `destroy` callback turns on V8's destroy
// tracking: each promise gets a weak callback the collector must process. In this suite's files, which
// run servers and clients in one process, that was a fifth of their CPU (2026-12-07: long-generation-cuts
// 35 → 27 CPU-s, server-flow 10.8 → 8.8, hostile-input 6.2 → 4.8).
//
// So the harness's hook is never enabled, and its `init` is called directly for each Test (an
// AsyncResource of type 'Test', constructed through the AsyncResource below), which is all the map needs
// for the suites. What is lost: an uncaught error or unhandled rejection in a test's asynchronous work is
// no longer charged to that test; the harness reports it as a diagnostic of the file, whose process then
// exits 1 (the file fails). The harness's hook is recognised by its `init` reading `testResources`; any
// other hook, and any Node whose harness differs, is left alone.
'use strict';
const asyncHooks = require('node:async_hooks');

const createHook = asyncHooks.createHook;
const BaseResource = asyncHooks.AsyncResource;
/** The harness's init, once it asked for its hook (the root test, made before that, is not mapped). */
let harnessInit;

function isHarness(callbacks) {
  return (
    typeof callbacks?.init === 'function' &&
    typeof callbacks.destroy === 'function' &&
    String(callbacks.init).includes('testResources')
  );
}

asyncHooks.createHook = function createHookUnlessTheHarness(callbacks) {
  if (harnessInit !== undefined || !isHarness(callbacks)) return createHook(callbacks);
  harnessInit = callbacks.init;
  // Never enabled: the harness enables it once and disables it at exit.
  const hook = createHook({});
  hook.enable = () => hook;
  return hook;
};

// node:test's Test class extends the AsyncResource it finds here when it loads (after this file).
asyncHooks.AsyncResource = class AsyncResource extends BaseResource {
  constructor(type, options) {
    super(type, options);
    if (type === 'Test') harnessInit?.(this.asyncId(), type, this.triggerAsyncId(), this);
  }
};
