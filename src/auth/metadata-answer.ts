/**
 * The answer at a protected resource metadata path (RFC 9728 §3): the document for GET and HEAD,
 * readable from any origin (a browser client discovers it before it has a token), 405 otherwise.
 */

/** What a binding answers for a metadata path. */
export interface MetadataAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export function metadataAnswer(method: string, json: string): MetadataAnswer {
  const cors = { 'access-control-allow-origin': '*' };
  if (method === 'OPTIONS') {
    return {
      status: 204,
      headers: { ...cors, 'access-control-allow-methods': 'GET', allow: 'GET, HEAD, OPTIONS' },
      body: '',
    };
  }
  if (method !== 'GET' && method !== 'HEAD') {
    return {
      status: 405,
      headers: { ...cors, allow: 'GET, HEAD, OPTIONS', 'content-type': 'application/json' },
      body: '{"error":"method_not_allowed"}',
    };
  }
  return {
    status: 200,
    headers: { ...cors, 'content-type': 'application/json', 'cache-control': 'public, max-age=300' },
    body: method === 'HEAD' ? '' : json,
  };
}
