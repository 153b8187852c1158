/**
 * `sluice serve`'s text and the options its parser accepts (a CommandSpec, command-line.ts), apart from
 * the command itself: main.ts answers `--help` and a mistyped option from here, before it loads the
 * command (which for `serve` means the SDK, zod and the demo server: half a CPU-second).
 */

const USAGE_LINE =
  'usage: sluice serve [--host H] [--port N] [--path P] [--mode auto|json|sse] [--stateless] [--redis URL] ...';

const HELP = `usage: sluice serve [options]

  --host HOST          address to bind (default 127.0.0.1; anything else is reachable from the network)
  --port N             port (default 3000; 0 picks a free one)
  --path PATH          endpoint path (default /mcp)
  --mode MODE          auto | json | sse: how requests are answered (default auto)
  --keepalive-ms N     SSE keepalive comment after N ms of silence (default 15000; 0 = off)
  --stream-after-ms N  in auto mode, switch to SSE after N ms without an answer (default 1000)
  --stateless          no sessions; a fresh server per request; GET and DELETE answer 405
  --hibernate-after-ms N  drop an idle session's server after N ms without a request and rebuild it
                       on the next one (0: after every answer; default off; see hibernateAfterMs)
  --grace-ms N         on SIGTERM/SIGINT, let requests in flight finish for up to N ms (default 10000)
  --auth-token TOKEN   require 'Authorization: Bearer TOKEN' (or set SLUICE_AUTH_TOKEN); demo-grade auth
  --oauth-issuer URL   be an OAuth 2.1 resource server: accept JWT access tokens from this authorization
                       server (its JWKS found through its RFC 8414 / OpenID metadata) and serve the
                       protected resource metadata at /.well-known/oauth-protected-resource<path> and at the root
  --oauth-resource URL with --oauth-issuer: the audience tokens must name (default: the endpoint URL as printed)
  --oauth-scopes "a b" with --oauth-issuer: scopes every request needs (advertised; without them 403)
  --oauth-dpop-nonce   with --oauth-issuer: DPoP proofs must carry a nonce this server handed out
                       (RFC 9449 §9); with --redis the instances share the nonce key, else give every
                       instance behind one balancer the same SLUICE_DPOP_NONCE_KEY (16 bytes or more)
  --max-sessions N     sessions held at once; more get 503 + Retry-After (default 10000)
  --max-sessions-per-client N
                       sessions one client holds (the principal with --auth-token, else the remote
                       address, IPv6 by /64); more get 429 + Retry-After (default 1000)
  --initialize-rate R  new sessions per second per client, sustained (default 20)
  --initialize-burst N new sessions per client in a burst (default 100)
  --max-concurrent-requests N
                       2026-07-28 requests one client keeps in flight at once (that era has no
                       sessions); more get 429 + Retry-After (default 128; per instance)
  --no-client-limits   turn all the per-client limits off (behind a proxy without auth, every client has
                       the proxy's address)
  --allow-host NAME    accept requests whose Host is NAME on a loopback bind (repeatable; added to
                       localhost, 127.0.0.1 and [::1]; behind a proxy, pass the client's Host instead:
                       nginx 'proxy_set_header Host $http_host;')
  --allow-origin ORIGIN  let browser pages from ORIGIN (e.g. https://app.example.com) call the server
                       (repeatable; default: same-origin only; requests without Origin are always allowed)
  --metrics            serve Prometheus metrics at /metrics on the same port
  --log json           structured JSON-line logs on stderr (session ids as short hashes, no secrets)
  --otel               OpenTelemetry spans per request through @opentelemetry/api (must be installed) and
                       the tracer provider your setup registers (e.g. node --import ./otel-setup.mjs)
  --tls-cert FILE      serve HTTPS with this PEM certificate (needs --tls-key)
  --tls-key FILE       the PEM private key for --tls-cert
  --http2              with --tls-*: HTTP/2, with HTTP/1.1 fallback negotiated by ALPN
  --redis URL          join a cluster of instances sharing sessions through Redis (or set SLUICE_REDIS_URL);
                       the hop between instances is signed with SLUICE_CLUSTER_SECRET, else a key shared in Redis
  --redis-sentinel NAME@HOST:PORT[,HOST:PORT...]
                       the same, with the Redis master NAME that these sentinels watch (follows failovers)
  --redis-cluster HOST:PORT[,HOST:PORT...]
                       the same, on a Redis Cluster (any of its nodes; the others are discovered)
  --advertise URL      the URL peers use to reach this instance's endpoint (default: the bound address)
  --session-prefix TAG begin the session ids this instance mints with 'TAG.', so a balancer can send a
                       session to its owner (docs/scale-out.md, "Owner-affine routing"); 1-32 of A-Z a-z 0-9 _ -
  --task-lease-ms N    how long a task's running instance holds it without renewing (default 15000): a
                       task whose instance died reads as failed (owner lost) this long after its last renewal
  --task-after-ms N    how long a call of an optional task tool may run before it becomes a task (default
                       250, at most 60000): one that ends sooner is answered directly; 0 makes every such
                       call a task at once

The demo's task tools (slow_compute, failing_job, confirm_delete, ...; reindex and generate when the
client declares the extension) run as tasks of the
io.modelcontextprotocol/tasks extension; with --redis* their records live in that Redis, so any
instance answers tasks/get, tasks/update and tasks/cancel (docs/tasks.md).
`;

/** `sluice serve`: its text and the options its parser accepts (CommandSpec). */
export const SERVE_COMMAND = {
  command: 'serve',
  usageLine: USAGE_LINE,
  help: HELP,
  options: {
    host: { type: 'string' },
    port: { type: 'string' },
    path: { type: 'string' },
    mode: { type: 'string' },
    'keepalive-ms': { type: 'string' },
    'stream-after-ms': { type: 'string' },
    stateless: { type: 'boolean' },
    'hibernate-after-ms': { type: 'string' },
    'grace-ms': { type: 'string' },
    'auth-token': { type: 'string' },
    'oauth-issuer': { type: 'string' },
    'oauth-resource': { type: 'string' },
    'oauth-scopes': { type: 'string' },
    'oauth-dpop-nonce': { type: 'boolean' },
    'max-sessions': { type: 'string' },
    'max-sessions-per-client': { type: 'string' },
    'initialize-rate': { type: 'string' },
    'initialize-burst': { type: 'string' },
    'max-concurrent-requests': { type: 'string' },
    'no-client-limits': { type: 'boolean' },
    'allow-host': { type: 'string', multiple: true },
    'allow-origin': { type: 'string', multiple: true },
    metrics: { type: 'boolean' },
    log: { type: 'string' },
    otel: { type: 'boolean' },
    'tls-cert': { type: 'string' },
    'tls-key': { type: 'string' },
    http2: { type: 'boolean' },
    redis: { type: 'string' },
    'redis-sentinel': { type: 'string' },
    'redis-cluster': { type: 'string' },
    advertise: { type: 'string' },
    'session-prefix': { type: 'string' },
    'task-lease-ms': { type: 'string' },
    'task-after-ms': { type: 'string' },
  },
} as const;
