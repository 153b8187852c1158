/**
 * What to do about a failure of the client-side commands (`call`, `tools`): a URL typed without its scheme, TLS
 * spoken to a plain-HTTP port (or the reverse), a certificate the client does not trust, nothing listening. Each
 * is recognised from the error and its causes (Node's and OpenSSL's codes and messages) and named with its fix.
 */
import { redirectTarget } from '../client/redirect.js';
import { oneLine as oneLineOf, UsageError } from './usage-error.js';

/**
 * The endpoint URL of a command line, or a usage error that says what was wrong. A URL typed without a scheme
 * (`localhost:3000/mcp` parses as the scheme `localhost:`; `127.0.0.1:3000/mcp` does not parse) gets the
 * `http://` form suggested.
 */
export function endpointUrl(text: string): URL {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (url !== undefined && (url.protocol === 'http:' || url.protocol === 'https:')) return url;
  if (!text.includes('://') && URL.canParse(`http://${text}`)) {
    throw new UsageError(`'${text}' has no http:// or https:// scheme; did you mean http://${text} ?`);
  }
  throw new UsageError(
    url === undefined
      ? `'${text}' is not a URL`
      : `'${text}' is not an http:// or https:// URL (scheme ${url.protocol.slice(0, -1)})`,
  );
}

/** Every code and message along an error's `cause` chain, lower-cased, for matching. */
function trail(error: unknown): string {
  const parts: string[] = [];
  let e: unknown = error;
  for (let depth = 0; depth < 8 && e !== undefined && e !== null; depth++) {
    if (typeof e === 'object') {
      const { code, message } = e as { code?: unknown; message?: unknown };
      if (typeof code === 'string') parts.push(code);
      if (typeof message === 'string') parts.push(message);
      e = (e as { cause?: unknown }).cause;
    } else {
      parts.push(String(e));
      e = undefined;
    }
  }
  return parts.join(' | ').toLowerCase();
}

const UNTRUSTED =
  /self[- ]signed|depth_zero_self_signed_cert|self_signed_cert_in_chain|unable_to_verify_leaf_signature|unable to verify the first certificate|unable_to_get_issuer_cert|unable to get local issuer certificate|cert_has_expired|certificate has expired/;
const NOT_TLS =
  /wrong version number|err_ssl_wrong_version_number|packet length too long|unknown protocol|eproto/;
const NAME_MISMATCH = /err_tls_cert_altname_invalid|does not match certificate's altnames/;

/**
 * A hint for a failed command against `url` (with a leading space), or '' when there is nothing specific to say.
 */
export function failureHint(error: unknown, url: URL | undefined): string {
  const t = trail(error);
  const at = url !== undefined ? url.host : 'the server';
  if (NOT_TLS.test(t) && url?.protocol === 'https:') {
    const plain = new URL(url.href);
    plain.protocol = 'http:';
    return ` (${at} does not speak TLS: it is a plain HTTP port; use ${plain.href})`;
  }
  if (UNTRUSTED.test(t)) {
    return (
      ` (the certificate of ${at} is not trusted, e.g. self-signed: run with NODE_EXTRA_CA_CERTS=ca.pem,` +
      ' the PEM of the CA that signed it, or of the certificate itself)'
    );
  }
  if (NAME_MISMATCH.test(t))
    return ` (the certificate of ${at} is not issued for that name: use a name it lists)`;
  if (/econnrefused/.test(t)) return ` (nothing listens at ${at}: is the server running, on that port?)`;
  // The initialize POST found nothing at that path: the usual slip is the path (a bare host, or /).
  if (/answered http 404\b/.test(t) && url !== undefined) {
    return ` (no MCP endpoint at ${url.pathname} on ${url.host}: check the URL's path; 'sluice serve' serves /mcp)`;
  }
  // A 307/308 to another origin: the server says it moved. Whether --follow-redirects would follow it is
  // the transport's own rule, asked here rather than restated (`t` is lower-case, as scheme and host are).
  const moved = /answered http (30[78]) \(redirect to (\S+) not followed/.exec(t);
  if (moved !== null && url !== undefined) {
    const from = new URL(url.href.toLowerCase());
    if (redirectTarget(Number(moved[1]), 'POST', from, moved[2] ?? null, 'follow') !== undefined)
      return ` (the server points to another origin: pass --follow-redirects to follow it, or use that URL)`;
    return from.protocol === 'https:' && moved[2]?.startsWith('http:') === true
      ? ` (it points from https to plain http, which is never followed: use that URL if you trust it)`
      : ' (it is a redirect that is never followed: use that URL if you trust it)';
  }
  if (/enotfound|eai_again/.test(t)) {
    return ` (the host name ${url?.hostname ?? 'of the URL'} does not resolve: check the URL, or use an address such as 127.0.0.1)`;
  }
  if (/socket hang up|econnreset/.test(t) && url?.protocol === 'http:') {
    const tls = new URL(url.href);
    tls.protocol = 'https:';
    return ` (the connection was closed without an answer; if the server speaks HTTPS, use ${tls.href})`;
  }
  return '';
}

/** Server-to-client requests the CLI does not provide, and what they are called for a human. */
export const UNPROVIDED: Readonly<Record<string, string>> = {
  'sampling/createMessage': 'sampling (an LLM completion)',
  'elicitation/create': 'elicitation (input from the user)',
  'roots/list': 'roots',
};

/**
 * `sluice serve` could not listen, or with `--redis*` could not reach Redis, said with what to do (node's
 * own text names only the errno; the cluster's only 'Redis is not connected'). The port is the one asked
 * for, so `--port 3000` in use says 3000. Exit 1: not bad usage, the machine's state.
 */
export class ListenFailure extends Error {
  /** The failure as said to the user, or `error` itself when there is nothing specific to say. */
  static from(error: unknown, host: string, port: number, redis = false): unknown {
    const said =
      redis && (error as { code?: unknown } | null)?.code === 'redis-unavailable'
        ? `could not reach Redis (${oneLineOf(error)}): is it running at the address --redis, --redis-sentinel, --redis-cluster or SLUICE_REDIS_URL gives?`
        : listenFailure(error, host, port);
    return said === undefined ? error : new ListenFailure(said, { cause: error });
  }
}

/** What to do about a failed `listen(port, host)`, or undefined for an error it does not know. */
export function listenFailure(error: unknown, host: string, port: number): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'EADDRINUSE') {
    return (
      `port ${port} on ${host} is already in use (another 'sluice serve', or another server): stop it, ` +
      'or pass --port N (--port 0 picks a free port and prints it)'
    );
  }
  if (code === 'EADDRNOTAVAIL') {
    return `${host} is not an address of this machine: pass --host with one of its addresses (or 0.0.0.0 for all)`;
  }
  if (code === 'EACCES') {
    return `no permission to listen on port ${port}: ports below 1024 need privileges; pass --port 1024 or higher`;
  }
  return undefined;
}

/**
 * A package the command needs that is not installed, said with the install line, or undefined. The
 * official SDK is a peer dependency: npm installs it on its own, but `--legacy-peer-deps`, some other
 * package managers and a hand-made node_modules leave it out, and node's text then names only the
 * file deep inside sluice that imported it.
 */
export function missingPackage(error: unknown): string | undefined {
  if ((error as { code?: unknown } | null)?.code !== 'ERR_MODULE_NOT_FOUND') return undefined;
  const name = /Cannot find package '([^']+)'/.exec(error instanceof Error ? error.message : '')?.[1];
  if (name === undefined) return undefined;
  return `the package '${name}' is not installed, and sluice needs it: npm install ${name} (in the project that installed sluice)`;
}

/**
 * What to do about a 401 when the command used no stored login. Every 401 used to say "requires a
 * login: run sluice login", also to a server with a static token (`sluice serve --auth-token`), where
 * login fails for want of OAuth metadata, and to a user who had passed a wrong --token. An OAuth
 * server says so in its challenge (`resource_metadata`, RFC 9728); a server that does not may still
 * use OAuth the older way, so login is offered there as the second choice.
 */
export function unauthorizedHint(
  url: string,
  wwwAuthenticate: string | undefined,
  sentCredentials: boolean,
): string {
  const oauth = /\bresource_metadata\s*=/i.test(wwwAuthenticate ?? '');
  if (sentCredentials) {
    const login = oauth ? `, or leave them out and run \`sluice login ${url}\`` : '';
    return `${url} refused the credentials given (HTTP 401): check --token or the Authorization header${login}`;
  }
  if (oauth) return `${url} requires a login: run \`sluice login ${url}\``;
  return (
    `${url} requires authorization (HTTP 401): pass --token T (sent as 'Authorization: Bearer T') or ` +
    `--header 'Authorization: …'; if it uses OAuth, run \`sluice login ${url}\``
  );
}
