/**
 * Waits for `p`, but no longer than `ms`: resolves when either comes first, and clears its timer
 * either way (a pending timer would keep a process alive after the work is done). Never rejects:
 * what `p` settles to is the caller's business, read from `p` itself when it matters.
 */
export async function boundedWait(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      p.then(
        () => undefined,
        () => undefined,
      ),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
