/**
 * `jose`, loaded on the first token or DPoP proof that needs it rather than with `sluice/server`:
 * it is 46 modules (~45 ms of a process's start on the 2-vCPU machine, measured 2026-12-04), and
 * most servers and every `sluice serve` without `--oauth-*` never verify a JWT. Every use of it is
 * in an async path already, so the first one waits for the import once; later ones get the module.
 */
export type Jose = typeof import('jose');

let loading: Promise<Jose> | undefined;

export function loadJose(): Promise<Jose> {
  loading ??= import('jose');
  return loading;
}
