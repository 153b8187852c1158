// `sluice login` / `logout` and the stored credentials `sluice tools` and `call` use, against the scripted
// authorization server and Sluice resource server of test/helpers/oauth-fixture.ts. The test is the browser: it
// fetches the printed authorization URL with `redirect: 'manual'` and follows the redirect to the loopback listener.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type ResourceServer, type ScriptedAs, startAs, startResource } from '../helpers/oauth-fixture.js';
import { runProcess } from '../helpers/run-process.js';

const cli = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The CLI run to its end (killed past the deadline); `onStderr` sees its stderr as it grows. */
async function sluice(
  args: string[],
  env: NodeJS.ProcessEnv,
  onStderr?: (text: string) => void,
): Promise<Ran> {
  const r = await runProcess(process.execPath, [cli, ...args], {
    ms: 30_000,
    label: `sluice ${args.join(' ')}`,
    env,
    ...(onStderr === undefined ? {} : { onStderr }),
  });
  return { code: r.code, stdout: r.out, stderr: r.err };
}

describe('sluice login', () => {
  let as: ScriptedAs;
  let rs: ResourceServer;
  let config: string;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    as = await startAs({ refresh: true });
    rs = await startResource(as);
    config = mkdtempSync(join(tmpdir(), 'sluice-login-'));
    env = { ...process.env, XDG_CONFIG_HOME: config };
  });

  after(async () => {
    await rs.close();
    await as.close();
    rmSync(config, { recursive: true, force: true });
  });

  test('without a login, tools says how to log in', async () => {
    const ran = await sluice(['tools', rs.url], env);
    assert.notEqual(ran.code, 0);
    assert.match(ran.stderr, new RegExp(`run \`sluice login ${rs.url}\``));
  });

  test('login follows the loopback redirect and stores the credentials, mode 0600', async () => {
    let visited: Promise<void> | undefined;
    const ran = await sluice(['login', rs.url], env, (text) => {
      const m = /^\s+(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)$/m.exec(text);
      if (m?.[1] === undefined || visited !== undefined) return;
      visited = (async () => {
        const answer = await fetch(m[1] as string, { redirect: 'manual' });
        const location = answer.headers.get('location');
        assert.ok(
          location?.startsWith('http://127.0.0.1:'),
          `redirect to the loopback listener: ${location}`,
        );
        const back = await fetch(location ?? '');
        assert.equal(back.status, 200);
        await back.text();
      })();
    });
    await visited;
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(ran.stderr, /Logged in to/);
    const file = join(config, 'sluice', 'credentials.json');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const stored = JSON.parse(readFileSync(file, 'utf8')) as {
      entries: { issuer: string; resource: string; server: string; tokens?: { access_token: string } }[];
    };
    assert.equal(stored.entries.length, 1);
    assert.equal(stored.entries[0]?.issuer, as.issuer);
    assert.equal(stored.entries[0]?.resource, rs.url);
    assert.ok(stored.entries[0]?.tokens?.access_token);
    // The redirect URI was a loopback IP literal (RFC 8252 §7.3), never `localhost`.
    assert.ok(as.urls.some((u) => u.includes(encodeURIComponent('http://127.0.0.1:'))));
  });

  test('tools and call use the stored credentials, refreshing an expired token', async () => {
    const listed = await sluice(['tools', rs.url], env);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /echo/);
    as.revokeAccess();
    const refreshesBefore = as.tokenCalls.filter((c) => c.grant === 'refresh_token').length;
    const called = await sluice(['call', rs.url, 'echo', '--arg', 'text=again'], env);
    assert.equal(called.code, 0, called.stderr);
    assert.match(called.stdout, /again/);
    assert.equal(as.tokenCalls.filter((c) => c.grant === 'refresh_token').length, refreshesBefore + 1);
    assert.equal(as.authorizations.length, 1, 'no new login needed');
  });

  test('logout forgets them', async () => {
    const ran = await sluice(['logout', rs.url], env);
    assert.equal(ran.code, 0);
    assert.match(ran.stderr, /Logged out/);
    const again = await sluice(['tools', rs.url], env);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /sluice login/);
  });
});
