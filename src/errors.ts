/**
 * Every error Sluice's server side raises, with a stable string code. Codes are never reused or
 * renamed; docs/errors.md describes each. `httpStatus` and `jsonRpcCode` say how a refusal goes
 * on the wire (see toWire in src/core/pipeline/refusal.ts).
 */

export type SluiceErrorCode =
  | 'SLUICE_INVALID_OPTION'
  | 'SLUICE_SSE_INVALID_FIELD'
  | 'SLUICE_UNSUPPORTED_SERVER'
  | 'SLUICE_BODY_CONSUMED'
  | 'SLUICE_INVALID_TOKEN'
  | 'SLUICE_AUTH_SERVER_UNAVAILABLE'
  | 'SLUICE_PARTIAL_CANCELLED'
  | 'SLUICE_SDK_TASK_STORE'
  | 'SLUICE_SHARED_TOOL'
  | 'SLUICE_SHARED_RECORD'
  | 'SLUICE_ALREADY_REGISTERED'
  | 'SLUICE_SESSION_WAKE';

const brand = Symbol.for('sluice.error');

export class SluiceError extends Error {
  readonly code: SluiceErrorCode;
  constructor(code: SluiceErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SluiceError';
    this.code = code;
    Object.defineProperty(this, brand, { value: true });
  }
  /** Works across two loaded copies of the package. */
  static override [Symbol.hasInstance](v: unknown): boolean {
    return typeof v === 'object' && v !== null && (v as Record<symbol, unknown>)[brand] === true;
  }
  override toString(): string {
    return `${this.name} [${this.code}]: ${this.message}`;
  }
}

/**
 * An option or argument that cannot work; thrown once, synchronously, by the call that received it
 * (`createMcpHandler`, `serve`, `staticBearer`, `sharedJsonSchemaValidator`, the client transport's
 * constructor, `idempotencyMeta`). Server and client share this one class.
 */
export class InvalidOptionError extends SluiceError {
  constructor(message: string) {
    super('SLUICE_INVALID_OPTION', message);
    this.name = 'InvalidOptionError';
  }
}

/** `createServer` returned something Sluice cannot drive (not an SDK v1 `McpServer` or `Server`). */
export class UnsupportedServerError extends SluiceError {
  constructor(message: string) {
    super('SLUICE_UNSUPPORTED_SERVER', message);
    this.name = 'UnsupportedServerError';
  }
}

/**
 * A POST whose body stream a framework already read (e.g. `express.json()` ran first) and whose
 * parsed body was not handed over: the handler cannot see the request.
 */
export class BodyConsumedError extends SluiceError {
  constructor(message: string) {
    super('SLUICE_BODY_CONSUMED', message);
    this.name = 'BodyConsumedError';
  }
}

/**
 * A send of partial output (`partialResults(extra)`) after the tool call was cancelled: by the
 * client's `notifications/cancelled`, a 2026-07-28 client closing the response, `orphanTimeoutMs`
 * or shutdown. A tool that only awaits its sends stops at the next one.
 */
export class PartialCancelledError extends SluiceError {
  constructor(options?: { cause?: unknown }) {
    super('SLUICE_PARTIAL_CANCELLED', 'the tool call was cancelled; no more partial output is sent', options);
    this.name = 'PartialCancelledError';
  }
}

/**
 * What `sdkTaskStore()` (SDK v1's `TaskStore` over Sluice's task store) raises to the SDK, which
 * answers the request with it (JSON-RPC -32603 with this message, and `data` when set): `reason`
 * says which case it is (`not-found`, `terminal`, `limit`, `full`, `too-large`, `not-runner`,
 * `no-result`, `failed` — the task failed without a stored result, `data` is its error's —,
 * `cursor`).
 */
export class SdkTaskStoreError extends SluiceError {
  readonly reason: string;
  readonly data: unknown;
  constructor(reason: string, message: string, data?: unknown) {
    super('SLUICE_SDK_TASK_STORE', message);
    this.name = 'SdkTaskStoreError';
    this.reason = reason;
    this.data = data;
  }
}

/**
 * `enable`, `disable`, `update` or `remove` called on the record of a tool that
 * `registerSharedTools` registered: that record is shared by every server the tool is in, so it
 * cannot change one server's tools. Register the tool with `registerTool` where it must change.
 */
export class SharedToolError extends SluiceError {
  constructor(tool: string, operation: string) {
    super(
      'SLUICE_SHARED_TOOL',
      `tool ${JSON.stringify(tool)} was registered by registerSharedTools: its record is shared by every ` +
        `server it is in, so ${operation}() cannot change one server's tools; use registerTool for a tool that changes`,
    );
    this.name = 'SharedToolError';
  }
}

/**
 * `enable`, `disable`, `update` or `remove` called on the record of a prompt, resource or resource
 * template that `registerSharedPrompts`/`registerSharedResources` registered: that record is shared
 * by every server it is in, so it cannot change one server's table. Register one that must change
 * with `registerPrompt`/`registerResource`.
 */
export class SharedRecordError extends SluiceError {
  constructor(kind: 'prompt' | 'resource' | 'resource template', name: string, operation: string) {
    super(
      'SLUICE_SHARED_RECORD',
      `${kind} ${JSON.stringify(name)} was registered as a shared ${kind}: its record is shared by every ` +
        `server it is in, so ${operation}() cannot change one server's ${kind}s; register one that changes ` +
        `with ${kind === 'prompt' ? 'registerPrompt' : 'registerResource'}`,
    );
    this.name = 'SharedRecordError';
  }
}

/**
 * `registerSharedTools`/`registerSharedPrompts`/`registerSharedResources` given a name (or URI)
 * the server already has: as the SDK's own `registerTool` does, a name is registered once per
 * server; unlike the SDK's plain `Error`, this one has a code. `kind` and `key` say which.
 */
export class AlreadyRegisteredError extends SluiceError {
  readonly kind: string;
  readonly key: string;
  constructor(kind: 'Tool' | 'Prompt' | 'Resource' | 'Resource template', key: string) {
    super('SLUICE_ALREADY_REGISTERED', `${kind} ${key} is already registered`);
    this.name = 'AlreadyRegisteredError';
    this.kind = kind;
    this.key = key;
  }
}

/**
 * A hibernated session's server could not be rebuilt (option `hibernateAfterMs`): `createServer`
 * threw or returned a server Sluice cannot drive (the same one again, say), or the fresh server
 * refused the client's replayed `initialize`. The session ends; the request that woke it gets a 500
 * naming this code, and the client's next request a 404, so it initializes a new session. `cause`
 * is what failed.
 */
export class SessionWakeError extends SluiceError {
  constructor(cause: unknown) {
    super(
      'SLUICE_SESSION_WAKE',
      `the hibernated session's server could not be rebuilt: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
    this.name = 'SessionWakeError';
  }
}
