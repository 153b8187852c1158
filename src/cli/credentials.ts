// Stored OAuth credentials of the `sluice` command: one JSON file in the user's config directory
// ($XDG_CONFIG_HOME/sluice, else ~/.config/sluice; %APPDATA%\sluice on Windows), mode 0600 in a 0700 directory,
// one entry per authorization server (issuer) and protected resource, found by the server URL the user typed.
// The file provider below is an SDK v1 `OAuthClientProvider` over one server's entry, so the transport's OAuth
// client reads and refreshes it like any provider.
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import type { OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';

export interface StoredEntry {
  /** The authorization server the credentials belong to. */
  issuer: string;
  /** The protected resource's identifier (its metadata's `resource`), or the server URL without one. */
  resource: string;
  /** The server URL as the user gave it (what `sluice call`/`tools`/`logout` look entries up by). */
  server: string;
  client?: OAuthClientInformationMixed | undefined;
  tokens?: OAuthTokens | undefined;
  /** Epoch ms when the tokens were saved. */
  savedAt?: number | undefined;
  /**
   * `sluice login --insecure-oauth-urls`: the user let the OAuth client reach URLs its policy refuses (plain HTTP,
   * internal addresses) for this server; the commands that use the entry do the same.
   */
  insecureOAuthUrls?: boolean | undefined;
}

interface StoreFile {
  version: 1;
  entries: StoredEntry[];
}

/** The directory for Sluice's configuration. */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env['XDG_CONFIG_HOME'];
  // XDG Base Directory: a relative value is invalid and ignored.
  if (xdg !== undefined && isAbsolute(xdg)) return join(xdg, 'sluice');
  if (process.platform === 'win32' && env['APPDATA'] !== undefined) return join(env['APPDATA'], 'sluice');
  return join(homedir(), '.config', 'sluice');
}

/** The credentials file, read and written whole (small; rewritten atomically). */
export class CredentialStore {
  readonly path: string;
  readonly #dir: string;

  constructor(dir = configDir()) {
    this.#dir = dir;
    this.path = join(dir, 'credentials.json');
  }

  read(): StoredEntry[] {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch {
      return [];
    }
    try {
      const parsed = JSON.parse(text) as Partial<StoreFile>;
      return Array.isArray(parsed.entries) ? parsed.entries : [];
    } catch {
      throw new Error(`${this.path} is not valid JSON; remove it or fix it`);
    }
  }

  write(entries: StoredEntry[]): void {
    mkdirSync(this.#dir, { recursive: true, mode: 0o700 });
    const tmp = `${this.path}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify({ version: 1, entries } satisfies StoreFile, null, 2)}\n`, {
      mode: 0o600,
    });
    chmodSync(tmp, 0o600);
    renameSync(tmp, this.path);
  }

  /** The newest entry for a server URL. */
  find(server: string): StoredEntry | undefined {
    return this.read().findLast((e) => e.server === server);
  }

  /** Replaces the entry with the same issuer and resource (or adds it). */
  put(entry: StoredEntry): void {
    const others = this.read().filter((e) => !(e.issuer === entry.issuer && e.resource === entry.resource));
    this.write([...others, entry]);
  }

  /** Removes every entry of a server URL; how many there were. */
  remove(server: string): number {
    const all = this.read();
    const kept = all.filter((e) => e.server !== server);
    if (kept.length !== all.length) this.write(kept);
    return all.length - kept.length;
  }
}

export interface FileProviderOptions {
  readonly clientId?: string | undefined;
  readonly clientSecret?: string | undefined;
  /** The loopback redirect URI (`sluice login`); undefined for commands that cannot log in. */
  readonly redirectUrl?: string | undefined;
  /** Called with the authorization URL (print it, open the browser). */
  readonly onAuthorizationUrl?: ((url: URL) => void) | undefined;
  /** `sluice login` says whether the user lifted the URL policy; undefined keeps what the entry says. */
  readonly insecureOAuthUrls?: boolean | undefined;
}

/** An `OAuthClientProvider` over the store's entry for one server URL. */
export class FileOAuthProvider implements OAuthClientProvider {
  readonly #store: CredentialStore;
  readonly #server: string;
  readonly #options: FileProviderOptions;
  #entry: StoredEntry | undefined;
  #verifier = '';

  constructor(store: CredentialStore, server: string, options: FileProviderOptions = {}) {
    this.#store = store;
    this.#server = server;
    this.#options = options;
    this.#entry = store.find(server);
  }

  get redirectUrl(): string | undefined {
    return this.#options.redirectUrl;
  }

  /** Whether the transport's OAuth URL policy is lifted for this server (the login's choice, stored). */
  get insecureOAuthUrls(): boolean {
    return this.#options.insecureOAuthUrls ?? this.#entry?.insecureOAuthUrls === true;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'sluice',
      redirect_uris: this.#options.redirectUrl !== undefined ? [this.#options.redirectUrl] : [],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  /** The issuer the stored credentials belong to: a different one in discovery means the server moved. */
  discoveryState(): OAuthDiscoveryState | undefined {
    return this.#entry !== undefined ? { authorizationServerUrl: this.#entry.issuer } : undefined;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    const resource = (state.resourceMetadata as { resource?: string } | undefined)?.resource ?? this.#server;
    const current = this.#entry;
    const insecure = this.#options.insecureOAuthUrls;
    if (
      current !== undefined &&
      current.issuer === state.authorizationServerUrl &&
      current.resource === resource
    ) {
      if (insecure !== undefined && (current.insecureOAuthUrls === true) !== insecure) {
        this.#update({ insecureOAuthUrls: insecure || undefined });
      }
      return;
    }
    // A new authorization server (or resource): a fresh entry; the old issuer's credentials are never reused.
    this.#entry = {
      issuer: state.authorizationServerUrl,
      resource,
      server: this.#server,
      ...(current?.issuer === state.authorizationServerUrl
        ? { client: current.client, tokens: current.tokens }
        : {}),
      ...((insecure ?? current?.insecureOAuthUrls) === true ? { insecureOAuthUrls: true } : {}),
    };
    this.#store.put(this.#entry);
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    if (this.#options.clientId !== undefined) {
      return {
        client_id: this.#options.clientId,
        ...(this.#options.clientSecret !== undefined ? { client_secret: this.#options.clientSecret } : {}),
      };
    }
    return this.#entry?.client;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.#update({ client: info });
  }

  tokens(): OAuthTokens | undefined {
    return this.#entry?.tokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.#update({ tokens, savedAt: Date.now() });
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all' || scope === 'tokens') this.#update({ tokens: undefined });
    if (scope === 'all' || scope === 'client') this.#update({ client: undefined });
  }

  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }

  codeVerifier(): string {
    return this.#verifier;
  }

  redirectToAuthorization(url: URL): void {
    if (this.#options.onAuthorizationUrl === undefined) {
      throw new Error(`${this.#server} requires a new login: run \`sluice login ${this.#server}\``);
    }
    this.#options.onAuthorizationUrl(url);
  }

  #update(change: Partial<StoredEntry>): void {
    const entry = this.#entry;
    if (entry === undefined) return;
    this.#entry = { ...entry, ...change };
    this.#store.put(this.#entry);
  }
}

/** A provider over the stored credentials of `server`, or undefined when `sluice login` stored none. */
export function storedAuth(server: string): FileOAuthProvider | undefined {
  const store = new CredentialStore();
  return store.find(server)?.tokens !== undefined ? new FileOAuthProvider(store, server) : undefined;
}
