/**
 * The nginx recipe of docs/scale-out.md, run as written: the ```nginx block under "### nginx" is
 * read from the document at test time, its `server ADDRESS:PORT;` lines pointed at the test's
 * loopback instances (nothing else is changed), and the `location` put in a `server {}` listening
 * on nginx's test port. A change to the document is a change to what the tests run.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { findNginx, NGINX_MISSING, type Nginx, startNginx } from './nginx.js';
import { findRedis, REDIS_MISSING } from './redis.js';
import { repoRoot } from './spawn-serve.js';

/** Why a test of the documented cluster recipes cannot run here (redis-server or nginx missing), else false. */
export function docClusterSkip(): string | false {
  return findRedis() === undefined ? REDIS_MISSING : findNginx() === undefined ? NGINX_MISSING : false;
}

/** The first ```nginx block under `heading` (a whole line) in docs/scale-out.md, verbatim. */
export function scaleOutNginxBlock(heading = '### nginx'): string {
  const doc = readFileSync(join(repoRoot(), 'docs', 'scale-out.md'), 'utf8');
  const section = doc.indexOf(`\n${heading}\n`);
  if (section < 0) throw new Error(`docs/scale-out.md has no "${heading}" section`);
  const open = doc.indexOf('```nginx\n', section);
  const close = doc.indexOf('\n```', open + 1);
  if (open < 0 || close < 0) throw new Error(`docs/scale-out.md "${heading}" has no \`\`\`nginx block`);
  return doc.slice(open + '```nginx\n'.length, close + 1);
}

/**
 * The block with its upstream `server` addresses replaced by 127.0.0.1 ports: the document's
 * distinct addresses, in the order they first appear, get `ports` in order (the test must start
 * that many instances; an address named in several upstreams gets the same port each time). Split
 * into what goes at the `http {}` level (upstreams, maps) and the `location` for the `server {}`.
 */
export function renderScaleOutBlock(
  block: string,
  ports: readonly number[],
): { http: string; location: string } {
  const line = /^(\s*server\s+)(\S+?:\d+)(.*;)$/gm;
  const addresses = [...new Set([...block.matchAll(line)].map((m) => m[2] as string))];
  if (addresses.length !== ports.length) {
    throw new Error(
      `the document's upstreams name ${addresses.length} servers; the test started ${ports.length}`,
    );
  }
  const pointed = block.replace(
    line,
    (_m, head: string, addr: string, tail: string) =>
      `${head}127.0.0.1:${ports[addresses.indexOf(addr)]}${tail}`,
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
  heading = '### nginx',
): Promise<Nginx> {
  const { http, location } = renderScaleOutBlock(edit(scaleOutNginxBlock(heading)), ports);
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
