/**
 * Which client identity to present to an authorization server (MCP basic/authorization §"Client Registration
 * Approaches"): pre-registered credentials, then a client ID metadata document (a URL as `client_id`, when the
 * server advertises `client_id_metadata_document_supported`), then dynamic registration. Credentials belong to
 * the issuer that issued them: after the resource moves to another authorization server the old ones are never
 * presented there, and the client registers anew (SEP-2352).
 */
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed } from '@modelcontextprotocol/sdk/shared/auth.js';
import { AuthorizationError } from '../errors.js';
import type { Discovery } from './metadata.js';
import type { OAuthHttp } from './oauth-http.js';
import { registerClient } from './token.js';

export class ClientRegistry {
  readonly #provider: OAuthClientProvider;
  readonly #http: OAuthHttp;
  /** Clients registered by this transport, by issuer. */
  readonly #registered = new Map<string, OAuthClientInformationMixed>();
  /** The issuer the provider's stored client belongs to, once known. */
  #providerIssuer: string | undefined;

  constructor(provider: OAuthClientProvider, http: OAuthHttp) {
    this.#provider = provider;
    this.#http = http;
  }

  /** Whether the provider's client metadata asks for refresh tokens (or leaves grant types open). */
  wantsRefresh(): boolean {
    const grants = this.#provider.clientMetadata.grant_types;
    return grants === undefined || grants.includes('refresh_token');
  }

  /**
   * The issuer the provider's stored credentials (client and tokens) belong to: what its discovery state says,
   * else the first issuer this transport met.
   */
  async storedIssuer(): Promise<string | undefined> {
    if (this.#providerIssuer !== undefined) return this.#providerIssuer;
    const state = await this.#provider.discoveryState?.();
    return state?.authorizationServerUrl;
  }

  /**
   * The client to present to `discovery.issuer`, registering when needed. `stored` is what `storedIssuer()` said
   * before this discovery was saved to the provider.
   */
  async clientFor(
    discovery: Discovery,
    stored: string | undefined,
    mayRegister: boolean,
  ): Promise<OAuthClientInformationMixed | undefined> {
    const issuer = discovery.issuer;
    const mine = this.#registered.get(issuer);
    if (mine !== undefined) return mine;
    if (stored === undefined || stored === issuer) {
      const info = await this.#provider.clientInformation();
      if (info !== undefined) {
        this.#providerIssuer = issuer;
        return info;
      }
    }
    const server = discovery.server;
    const documentUrl = this.#provider.clientMetadataUrl;
    if (documentUrl !== undefined && server.client_id_metadata_document_supported === true) {
      return { client_id: documentUrl };
    }
    if (!mayRegister) return undefined;
    if (server.registration_endpoint === undefined) {
      throw new AuthorizationError(
        'no-client',
        `no client is registered with ${issuer}, it supports no client ID metadata documents, and it offers no registration endpoint`,
      );
    }
    const info = await registerClient(
      this.#http,
      server.registration_endpoint,
      this.#provider.clientMetadata,
      this.wantsRefresh(),
    );
    this.#registered.set(issuer, info);
    this.#providerIssuer = issuer;
    await this.#provider.saveClientInformation?.(info);
    return info;
  }
}
