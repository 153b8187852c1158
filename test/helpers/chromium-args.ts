/**
 * The flags every Chromium the tests launch gets beside its own: tests reach only loopback. A packet capture
 * of a CI run saw Chromium look up accounts.google.com and update.googleapis.com (its sign-in and component
 * updater) even with background networking off, so its resolver is also told that no name but loopback exists:
 * no DNS query leaves the machine, and a page that reached for another host would fail visibly.
 */
export const LOOPBACK_ONLY_CHROMIUM_ARGS: readonly string[] = [
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1',
];
