/** Holds this process's event loop for `ms`: what a long collection or a starved CPU does to it. */
export function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy: nothing else of this process runs
  }
}
