/**
 * The nginx recipe of docs/scale-out.md, run as written: the ```nginx block under "### nginx" is
 * read from the document at test time, its `server ADDRESS:PORT;` lines pointed at the test's
 * loopback instances (nothing else is changed), and the `location` put in a `server {}` listening
 * on nginx's test port. A change to the document is a change to what the tests run.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Nginx, startNginx } from './nginx.js';
import { repoRoot } from './spawn-serve.js';

/** The ```nginx block of docs/scale-out.md's "### nginx" section, verbatim. */
export function scaleOutNginxBlock(): string {
  const doc = readFileSync(join(repoRoot(), 'docs', 'scale-out.md'), 'utf8');
  const section = doc.indexOf('\n### nginx\n');
  if (section < 0) throw new Error('docs/scale-out.md has no "### nginx" section');
  const open = doc.indexOf('```nginx\n', section);
  const close = doc.indexOf('\n```', open + 1);
  if (open < 0 || close < 0) throw new Error('docs/scale-out.md "### nginx" has no ```nginx block');
  return doc.slice(open + '```nginx\n'.length, close + 1);
}

/**
 * The block with its upstream `server` lines replaced by 127.0.0.1 ports (as many as the document
 * lists; the test must start that many instances), split into what goes at the `http {}` level
 * (the upstream) and the `location` for the `server {}` block.
 */
export function renderScaleOutBlock(
  block: string,
  ports: readonly number[],
): { http: string; location: string } {
  const servers = [...block.matchAll(/^(\s*server\s+)(\S+?:\d+)(.*;)$/gm)];
  if (servers.length !== ports.length) {
    throw new Error(
      `the document's upstream lists ${servers.length} servers; the test started ${ports.length}`,
    );
  }
  let i = 0;
  const pointed = block.replace(
    /^(\s*server\s+)(\S+?:\d+)(.*;)$/gm,
    (_m, head: string, _addr: string, tail: string) => `${head}127.0.0.1:${ports[i++]}${tail}`,
  );
  const loc = pointed.search(/^location\s/m);
  if (loc < 0) throw new Error('the nginx block has no location');
  return { http: pointed.slice(0, loc), location: pointed.slice(loc) };
}

/**
 * nginx running the document's block in front of `ports`. `edit` may change the block first (a
 * control run that shows what a line is for); by default the block is used as written.
 */
export async function startDocNginx(
  ports: readonly number[],
  edit: (block: string) => string = (b) => b,
): Promise<Nginx> {
  const { http, location } = renderScaleOutBlock(edit(scaleOutNginxBlock()), ports);
  return startNginx({
    upstreamPort: 0,
    rawHttp: (port) => `${http}
  server {
    listen 127.0.0.1:${port};
    server_name localhost;
${location}
  }`,
  });
}
