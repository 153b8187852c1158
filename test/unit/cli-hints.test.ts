/**
 * What the CLI says about a new user's usual mistakes, in-process (no child process): a port already
 * in use, a host that is not this machine's, a mistyped option, a host name that does not resolve, a
 * peer dependency left uninstalled, a 401 from a server with a static token. Each must say what to do,
 * not only node's errno or a parser's text.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { describe, test } from 'node:test';
import { readCommandLine } from '../../src/cli/command-line.js';
import { connectClient } from '../../src/cli/connect.js';
import {
  failureHint,
  ListenFailure,
  listenFailure,
  missingPackage,
  unauthorizedHint,
} from '../../src/cli/hints.js';
import { main as serveMain } from '../../src/cli/serve.js';
import { SERVE_COMMAND } from '../../src/cli/spec/serve.js';
import { main as topMain } from '../../src/cli/top.js';
import { HttpStatusError } from '../../src/client/index.js';
import { createDemoServer } from '../../src/demo/demo-server.js';
import { serve, staticBearer } from '../../src/server/index.js';
import { withDeadline } from '../helpers/deadline.js';

/** What `fn` wrote on stderr, and what it returned. */
async function capturingStderr<T>(fn: () => Promise<T> | T): Promise<{ result: T; stderr: string }> {
  const write = process.stderr.write;
  let stderr = '';
  process.stderr.write = ((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  }) as typeof process.stderr.write;
  try {
    return { result: await fn(), stderr };
  } finally {
    process.stderr.write = write;
  }
}

async function listening(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  assert.ok(address !== null && typeof address === 'object');
  return { server, port: address.port };
}

describe('sluice serve: a failure to listen says what to do', () => {
  test('a port in use: exit 1, one line naming the port, --port and --port 0', async () => {
    const { server, port } = await listening();
    try {
      const { result, stderr } = await capturingStderr(() =>
        withDeadline(serveMain(['--port', String(port)]), 10_000, 'sluice serve on a port in use'),
      );
      assert.equal(result, 1);
      assert.equal(
        stderr,
        `sluice serve: port ${port} on 127.0.0.1 is already in use (another 'sluice serve', or another server): ` +
          'stop it, or pass --port N (--port 0 picks a free port and prints it)\n',
      );
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test('a --tls-cert that cannot be read is bad usage naming the flag', async () => {
    const { result, stderr } = await capturingStderr(() =>
      withDeadline(
        serveMain(['--port', '0', '--tls-cert', '/nonexistent/c.pem', '--tls-key', '/nonexistent/k.pem']),
        10_000,
        'sluice serve with a missing certificate',
      ),
    );
    assert.equal(result, 2);
    assert.match(stderr, /^sluice serve: --tls-cert: cannot read \/nonexistent\/c\.pem \(ENOENT/);
  });

  test('Redis out of reach is said as such, with the flags that name it', () => {
    const error = Object.assign(new Error('Redis is not connected'), { code: 'redis-unavailable' });
    const failure = ListenFailure.from(error, '127.0.0.1', 0, true);
    assert.ok(failure instanceof ListenFailure);
    assert.match(
      failure.message,
      /^could not reach Redis \(Redis is not connected\): is it running at the address --redis/,
    );
    assert.equal(ListenFailure.from(error, '127.0.0.1', 0, false), error);
  });

  test('a host that is not this machine, and a privileged port, are named with the fix', () => {
    const notHere = listenFailure(Object.assign(new Error('x'), { code: 'EADDRNOTAVAIL' }), '10.9.9.9', 3000);
    assert.match(notHere ?? '', /^10\.9\.9\.9 is not an address of this machine: pass --host/);
    const denied = listenFailure(Object.assign(new Error('x'), { code: 'EACCES' }), '127.0.0.1', 80);
    assert.match(denied ?? '', /port 80: ports below 1024 need privileges/);
    assert.equal(listenFailure(new Error('other'), '127.0.0.1', 3000), undefined);
  });
});

describe('a mistyped option names the nearest one', () => {
  test("--prot: 'did you mean --port?', without node's advice about positionals", async () => {
    const { result, stderr } = await capturingStderr(() =>
      readCommandLine(SERVE_COMMAND, ['--prot', '3001']),
    );
    assert.equal(result, 2);
    const [first, usage, hint] = stderr.split('\n');
    assert.equal(first, "sluice serve: Unknown option '--prot'; did you mean '--port'?");
    assert.match(usage ?? '', /^usage: sluice serve /);
    assert.equal(hint, "run 'sluice serve --help' for the options");
  });

  test('an option far from every name is only named', async () => {
    const { result, stderr } = await capturingStderr(() => readCommandLine(SERVE_COMMAND, ['--bogus']));
    assert.equal(result, 2);
    assert.equal(stderr.split('\n')[0], "sluice serve: Unknown option '--bogus'");
  });
});

describe('client commands: hints', () => {
  test('a host name that does not resolve says so', () => {
    const error = new Error('fetch failed', {
      cause: Object.assign(new Error('getaddrinfo ENOTFOUND nosuch.invalid'), { code: 'ENOTFOUND' }),
    });
    assert.match(
      failureHint(error, new URL('http://nosuch.invalid/mcp')),
      /the host name nosuch\.invalid does not resolve: check the URL/,
    );
  });

  test('sluice top: a server that is not running gets the same hint as call and tools', async () => {
    const { server, port } = await listening();
    await new Promise((resolve) => server.close(resolve));
    const { result, stderr } = await capturingStderr(() =>
      withDeadline(
        topMain([`http://127.0.0.1:${port}/mcp`, '--once']),
        10_000,
        'sluice top of a closed port',
      ),
    );
    assert.equal(result, 1);
    assert.equal(
      stderr,
      `sluice top: http://127.0.0.1:${port}/metrics: ECONNREFUSED (nothing listens at 127.0.0.1:${port}: ` +
        'is the server running, on that port?)\n',
    );
  });

  test('a 307 to another origin names --follow-redirects; one to plain http says it is never followed', () => {
    const note = (to: string) =>
      `redirect to ${to} not followed: a redirect must keep the method and stay within the origin, or with redirectPolicy 'follow' not go from https to http`;
    const moved = new HttpStatusError('POST', 307, '', undefined, note('https://new.example.com/mcp'));
    assert.equal(
      failureHint(moved, new URL('https://old.example.com/mcp')),
      ' (the server points to another origin: pass --follow-redirects to follow it, or use that URL)',
    );
    const plain = new HttpStatusError('POST', 308, '', undefined, note('http://old.example.com/mcp'));
    assert.equal(
      failureHint(plain, new URL('https://old.example.com/mcp')),
      ' (it points from https to plain http, which is never followed: use that URL if you trust it)',
    );
    // A 302 of a POST would lose the message: no flag helps, so none is named.
    const lossy = new HttpStatusError('POST', 302, '', undefined, note('https://new.example.com/mcp'));
    assert.equal(failureHint(lossy, new URL('https://old.example.com/mcp')), '');
    // One the transport never follows for another reason (other credentials in the URL): no flag named.
    const creds = new HttpStatusError('POST', 307, '', undefined, note('https://u:p@new.example.com/mcp'));
    assert.equal(
      failureHint(creds, new URL('https://old.example.com/mcp')),
      ' (it is a redirect that is never followed: use that URL if you trust it)',
    );
  });

  test('a 404 on connecting says to check the path', () => {
    const error = new HttpStatusError('POST', 404, '<html>Not Found</html>');
    assert.equal(
      failureHint(error, new URL('http://127.0.0.1:3000/')),
      " (no MCP endpoint at / on 127.0.0.1:3000: check the URL's path; 'sluice serve' serves /mcp)",
    );
  });

  test('a missing package is named with its install line', async () => {
    const error = await import('sluice-test-no-such-package' as string).then(
      () => assert.fail('imported a package that does not exist'),
      (e: unknown) => e,
    );
    assert.equal(
      missingPackage(error),
      "the package 'sluice-test-no-such-package' is not installed, and sluice needs it: " +
        'npm install sluice-test-no-such-package (in the project that installed sluice)',
    );
    assert.equal(missingPackage(new Error('other')), undefined);
  });
});

describe('a 401 says what to pass: a token, or a login only where one can work', () => {
  test('a static-token server (sluice serve --auth-token): --token, not sluice login; a wrong token is named', async () => {
    const served = await serve({
      createServer: createDemoServer,
      port: 0,
      authenticate: staticBearer('token-right-1'),
    });
    try {
      const connecting = (token: string | undefined) =>
        withDeadline(connectClient(served.url, {}, { token }), 10_000, 'connect').then(
          () => assert.fail('connected without the token'),
          (e: unknown) => (e instanceof Error ? e.message : String(e)),
        );
      assert.equal(
        await connecting(undefined),
        `${served.url} requires authorization (HTTP 401): pass --token T (sent as 'Authorization: Bearer T') or ` +
          `--header 'Authorization: …'; if it uses OAuth, run \`sluice login ${served.url}\``,
      );
      assert.equal(
        await connecting('token-wrong-1'),
        `${served.url} refused the credentials given (HTTP 401): check --token or the Authorization header`,
      );
    } finally {
      await served.close({ graceMs: 100 });
    }
  });

  test('an OAuth challenge (resource_metadata) points at sluice login', () => {
    const challenge =
      'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"';
    assert.equal(
      unauthorizedHint('https://mcp.example.com/mcp', challenge, false),
      'https://mcp.example.com/mcp requires a login: run `sluice login https://mcp.example.com/mcp`',
    );
    assert.match(
      unauthorizedHint('https://mcp.example.com/mcp', challenge, true),
      /refused the credentials given \(HTTP 401\): check --token or the Authorization header, or leave them out and run `sluice login/,
    );
  });
});
