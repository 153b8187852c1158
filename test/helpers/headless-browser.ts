/**
 * The user agent of an authorization-code flow, headless: it opens the authorization URL, keeps the
 * cookies a real authorization server sets (oidc-provider binds its interaction to them), follows each
 * redirect itself, and stops at the one that leads to the client's redirect URI, which it hands back as
 * the authorization response. The authorization server decides what the "user" does (auth-server.ts
 * logs in and consents without a form).
 */
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';

/** Steps one authorization may take (authorize → interaction → login → authorize → consent → authorize). */
const MAX_HOPS = 16;

/** What the user types into a login page: any name and password (a development login accepts them). */
const USER = { login: 'alice', password: 'any-password' };

/**
 * The first `<form method="post">` of a page, with what the user submits: its hidden fields as they are, text
 * and password fields filled in. Undefined when the page has none.
 */
function postForm(html: string): { action: string; fields: URLSearchParams } | undefined {
  const form = /<form\b[^>]*>[\s\S]*?<\/form>/i.exec(html)?.[0];
  if (form === undefined || !/method="post"/i.test(form)) return undefined;
  const action = /action="([^"]*)"/i.exec(form)?.[1];
  if (action === undefined) return undefined;
  const fields = new URLSearchParams();
  for (const input of form.matchAll(/<input\b[^>]*>/gi)) {
    const tag = input[0];
    const name = /name="([^"]*)"/i.exec(tag)?.[1];
    if (name === undefined) continue;
    const type = /type="([^"]*)"/i.exec(tag)?.[1]?.toLowerCase() ?? 'text';
    const value = /value="([^"]*)"/i.exec(tag)?.[1] ?? '';
    if (type === 'hidden') fields.set(name, value);
    else if (type === 'text' || type === 'email') fields.set(name, USER.login);
    else if (type === 'password') fields.set(name, USER.password);
  }
  return { action: action.replace(/&amp;/g, '&'), fields };
}

export class HeadlessBrowser {
  readonly #cookies = new Map<string, string>();
  /** Every URL the browser opened, in order: path and query, `POST ` before a submitted form's (tests check no
   * token ever travels in one). */
  readonly visited: string[] = [];

  /** Opens `start` and follows redirects until one points at `redirectUri`; returns that URL. */
  async authorize(start: URL, redirectUri: string): Promise<URL> {
    let url = start;
    let pending: { target: URL; body: URLSearchParams } | undefined;
    for (let hop = 0; hop < MAX_HOPS; hop++) {
      const cookie = [...this.#cookies].map(([k, v]) => `${k}=${v}`).join('; ');
      const post = pending?.target === url ? pending.body : undefined;
      pending = undefined;
      this.visited.push(`${post === undefined ? '' : 'POST '}${url.pathname}${url.search}`);
      const res = await fetch(url, {
        redirect: 'manual',
        ...(post === undefined
          ? { headers: cookie === '' ? {} : { cookie } }
          : {
              method: 'POST',
              headers: {
                'content-type': 'application/x-www-form-urlencoded',
                ...(cookie === '' ? {} : { cookie }),
              },
              body: post,
            }),
        signal: AbortSignal.timeout(10_000),
      });
      for (const line of res.headers.getSetCookie()) {
        const pair = line.split(';', 1)[0] ?? '';
        const eq = pair.indexOf('=');
        if (eq > 0) this.#cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
      }
      const location = res.headers.get('location');
      const body = await res.text();
      const form = res.status === 200 ? postForm(body) : undefined;
      if (form !== undefined) {
        // A login or consent page (oidc-provider's development interactions): the user fills it in and submits.
        const target = new URL(form.action, url);
        pending = { target, body: form.fields };
        url = target;
        continue;
      }
      if (res.status < 300 || res.status >= 400 || location === null) {
        throw new Error(`authorization stopped at ${url.pathname} with ${res.status}: ${body.slice(0, 300)}`);
      }
      const next = new URL(location, url);
      if (next.href.startsWith(redirectUri)) return next;
      url = next;
    }
    throw new Error(`authorization took more than ${MAX_HOPS} steps`);
  }
}

/**
 * An in-memory OAuthClientProvider (SDK v1's interface, which Sluice's transport takes) whose
 * redirect goes to a HeadlessBrowser; pass {@link response} as the transport's
 * `waitForAuthorizationResponse`.
 */
export class BrowserProvider implements OAuthClientProvider {
  readonly browser: HeadlessBrowser;
  #client: OAuthClientInformationMixed | undefined;
  #tokens: OAuthTokens | undefined;
  #verifier = '';
  #pending: Promise<URL> | undefined;
  /** Authorization requests the browser was sent to. */
  authorizations = 0;
  /** Every token set saved, in order. */
  readonly saved: OAuthTokens[] = [];

  constructor(browser: HeadlessBrowser = new HeadlessBrowser()) {
    this.browser = browser;
  }

  get redirectUrl(): string {
    // Never listened on: the browser stops at the redirect (RFC 8252 §7.3 loopback, any port).
    return 'http://127.0.0.1:9/callback';
  }

  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'sluice-e2e', redirect_uris: [this.redirectUrl] };
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.#client;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.#client = info;
  }

  tokens(): OAuthTokens | undefined {
    return this.#tokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.#tokens = tokens;
    this.saved.push(tokens);
  }

  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }

  codeVerifier(): string {
    return this.#verifier;
  }

  redirectToAuthorization(url: URL): void {
    this.authorizations++;
    this.#pending = this.browser.authorize(url, this.redirectUrl);
    // Observed by response(); a failure must not go unhandled before that.
    this.#pending.catch(() => undefined);
  }

  /** What `waitForAuthorizationResponse` returns. */
  response(): Promise<URL> {
    const p = this.#pending;
    this.#pending = undefined;
    return p ?? Promise.reject(new Error('no authorization started'));
  }
}

/** The claims of a JWT, unverified (for assertions on what the authorization server issued). */
export function jwtClaims(token: string): Record<string, unknown> {
  const payload = token.split('.')[1];
  if (payload === undefined) throw new Error('not a JWT');
  return JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
}
