/**
 * Makes an SDK server's `connect` wait `ms` (a timer) before connecting, as an application that
 * loads state first would: messages sent meanwhile arrive while the server is being connected (an
 * initialize in flight, a hibernated session's wake under way). `started` is called as each connect
 * begins.
 */
export function slowConnect<S extends { connect(transport: never): Promise<void> }>(
  server: S,
  ms: number,
  started?: () => void,
): S {
  const connect = server.connect.bind(server) as (transport: never) => Promise<void>;
  server.connect = async (transport: never) => {
    started?.();
    await new Promise((resolve) => setTimeout(resolve, ms));
    return connect(transport);
  };
  return server;
}
