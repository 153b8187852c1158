/**
 * The official conformance server suite (0.1.16) through HAProxy and through Caddy, each running
 * docs/deploy.md's block as written (its addresses pointed at the test's ports; Caddy also gets the
 * test's global options: admin endpoint and automatic HTTPS off), in front of `sluice serve`. Run
 * by hand it found that Caddy's `encode` on the MCP path holds event streams (the elicitation
 * scenarios timed out), which the block now avoids; here it guards both blocks end to end. nginx's
 * run is nginx-conformance.test.ts.
 */
import { after, test } from 'node:test';
import { assertActiveSuitePasses, conformanceCli, removeOutDirs } from '../helpers/conformance.js';
import {
  CADDY_TEST_GLOBALS,
  docBlock,
  type ProxyKind,
  pointBlock,
  type RunningProxy,
  skipWithoutCaddy,
  skipWithoutHaproxy,
  startProxy,
} from '../helpers/proxies.js';
import { type SpawnedServe, spawnServe } from '../helpers/spawn-serve.js';

const BLOCKS: Record<ProxyKind, string> = {
  haproxy: docBlock('deploy.md', '## HAProxy', 'haproxy'),
  caddy: docBlock('deploy.md', '## Caddy', 'caddy'),
};

const running: (SpawnedServe | RunningProxy)[] = [];
after(async () => {
  for (const r of running.splice(0).reverse()) {
    if ('stop' in r) await r.stop();
    else await r.close();
  }
  removeOutDirs();
});

for (const kind of ['haproxy', 'caddy'] as const) {
  test(`official conformance server suite passes through ${kind} (docs/deploy.md, the block as written)`, async (t) => {
    if (kind === 'haproxy' ? skipWithoutHaproxy(t) : skipWithoutCaddy(t)) return;
    conformanceCli(); // fail first with the install hint, before starting anything
    const server = await spawnServe();
    running.push(server);
    const port = Number(new URL(server.url).port);
    const proxy = await startProxy(kind, (listen) => {
      const pointed = pointBlock(BLOCKS[kind], [port], listen);
      // The block's `http://:8080` serves every Host; pointBlock's `http://127.0.0.1:PORT` would be a
      // site for that Host only, and Caddy answers any other Host itself (an empty 200). The suite's
      // DNS-rebinding scenario sends another Host, which must reach Sluice's Host check: the address
      // keeps the block's any-Host form, on loopback by CADDY_TEST_GLOBALS' default_bind.
      if (kind === 'haproxy') return pointed;
      return `${CADDY_TEST_GLOBALS}${pointed.replace(`http://127.0.0.1:${listen}`, `http://:${listen}`)}`;
    });
    running.push(proxy);
    await assertActiveSuitePasses({
      url: proxy.url,
      stderr: () => `${server.stderr()}\n--- ${kind} log ---\n${proxy.log()}`,
    });
  });
}
