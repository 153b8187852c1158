// `sluice login URL` and `sluice logout URL`. Login runs the OAuth authorization-code flow with a loopback
// redirect (RFC 8252 §7.3: a listener on 127.0.0.1, any port; the authorization URL printed, the browser opened
// with --open), through the same transport the other commands use: it connects, the server answers 401, the
// transport discovers, registers, sends the user to the authorization URL and waits for the redirect. The
// credentials land in the user's config directory (credentials.ts); `sluice call`/`tools`/`doctor` use and
// refresh them.
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHttpClientTransport } from '../client/index.js';
import { readCommandLine } from './command-line.js';
import { CredentialStore, FileOAuthProvider } from './credentials.js';
import { LOGIN_COMMAND, LOGOUT_COMMAND } from './spec/login.js';
import { usageFailure } from './usage-error.js';

/** Opens a URL in the user's browser; failures only mean the user opens the printed URL by hand. */
function openBrowser(url: string): void {
  const command =
    process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  try {
    const child = spawn(command, [url], { stdio: 'ignore', detached: true });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // The URL is printed; the user can open it.
  }
}

/** A listener on 127.0.0.1 whose first request to /callback resolves `response` with that request's URL. */
async function loopback(
  port: number,
): Promise<{ redirectUrl: string; response: Promise<URL>; close(): void }> {
  let resolve: (url: URL) => void = () => undefined;
  const response = new Promise<URL>((r) => {
    resolve = r;
  });
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://127.0.0.1`);
    if (url.pathname !== '/callback') {
      res.writeHead(404).end();
      return;
    }
    res
      .writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' })
      .end('sluice: authorization received; you can close this window.\n');
    resolve(new URL(`${redirectUrl}${url.search}`));
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', ok);
  });
  const redirectUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
  return {
    redirectUrl,
    response,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

export async function main(argv: string[]): Promise<number> {
  const line = readCommandLine(LOGIN_COMMAND, argv);
  if (typeof line === 'number') return line;
  const { values, positionals } = line;
  const url = positionals[0];
  const port = Number(values.port ?? '0');
  const timeoutSeconds = Number(values['timeout-seconds'] ?? '300');
  if (positionals.length !== 1 || url === undefined || !URL.canParse(url)) {
    return usageFailure('login', 'expected exactly one server URL', LOGIN_COMMAND.usageLine);
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535 || !(timeoutSeconds >= 1)) {
    return usageFailure(
      'login',
      '--port must be 0-65535 and --timeout-seconds >= 1',
      LOGIN_COMMAND.usageLine,
    );
  }
  if (values['client-secret'] !== undefined && values['client-id'] === undefined) {
    return usageFailure('login', '--client-secret needs --client-id', LOGIN_COMMAND.usageLine);
  }
  const listener = await loopback(port);
  const store = new CredentialStore();
  let prompted = false;
  const insecureOAuthUrls = values['insecure-oauth-urls'] === true;
  const provider = new FileOAuthProvider(store, url, {
    insecureOAuthUrls,
    clientId: values['client-id'],
    clientSecret: values['client-secret'],
    redirectUrl: listener.redirectUrl,
    onAuthorizationUrl: (authorizationUrl) => {
      prompted = true;
      process.stderr.write(`Open this URL to authorize sluice:\n\n  ${authorizationUrl.href}\n\n`);
      if (values.open === true) openBrowser(authorizationUrl.href);
    },
  });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no authorization came back within ${timeoutSeconds} s`)),
      timeoutSeconds * 1000,
    );
  });
  const client = new Client({ name: 'sluice-cli', version: '0.1.0' });
  // A fresh login: stored tokens are not reused, so the flow runs even when old ones still work.
  provider.invalidateCredentials('tokens');
  const transport = new StreamableHttpClientTransport(url, {
    authProvider: provider,
    waitForAuthorizationResponse: () => Promise.race([listener.response, deadline]),
    // The tokens are stored for later commands; a DPoP key dies with this process (RFC 9449).
    dpop: false,
    insecureOAuthUrls,
  });
  try {
    await Promise.race([client.connect(transport), deadline]);
    const entry = store.find(url);
    if (!prompted || entry === undefined) {
      process.stderr.write(`${url} did not ask for a login; nothing stored\n`);
    } else {
      process.stderr.write(
        `Logged in to ${url} (authorization server ${entry.issuer}); credentials in ${store.path}\n`,
      );
    }
    return 0;
  } catch (error) {
    process.stderr.write(`sluice login: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    clearTimeout(timer);
    listener.close();
    await client.close().catch(() => undefined);
  }
}

export async function logout(argv: string[]): Promise<number> {
  const line = readCommandLine(LOGOUT_COMMAND, argv);
  if (typeof line === 'number') return line;
  const url = line.positionals[0];
  if (line.positionals.length !== 1 || url === undefined) {
    return usageFailure('logout', 'expected exactly one server URL', LOGOUT_COMMAND.usageLine);
  }
  const store = new CredentialStore();
  const removed = store.remove(url);
  process.stderr.write(removed > 0 ? `Logged out of ${url}\n` : `No credentials stored for ${url}\n`);
  return 0;
}
