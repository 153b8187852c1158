/**
 * Bound every wait in a test: a hung promise must turn into a descriptive
 * failure, never into a test run that stalls until the CI job times out.
 */
export function withDeadline<T>(p: Promise<T>, ms: number, label: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`deadline exceeded: ${label} did not settle within ${ms} ms`));
    }, ms);
    // Never keep the event loop alive just for the deadline itself.
    timer.unref();
    p.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
