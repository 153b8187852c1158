/**
 * Fetching one instance's `/metrics` for `sluice top`: the URL an operator gives (the MCP endpoint
 * as `sluice serve` prints it, or the metrics URL itself), a bounded GET, and a streamed parse, so
 * an answer that is not Prometheus text fails with a message that says what came back.
 */
import { get as httpGet } from 'node:http';
import { get as httpsGet } from 'node:https';
import { type Exposition, ExpositionError, ExpositionParser } from './exposition.js';
import { Snapshot } from './series.js';

/** A scrape failed: unreachable, not 200, too big, too slow, or not Prometheus text. */
export class ScrapeError extends Error {
  readonly code: 'SCRAPE_UNREACHABLE' | 'SCRAPE_STATUS' | 'SCRAPE_NOT_PROMETHEUS' | 'SCRAPE_TOO_LARGE';
  constructor(code: ScrapeError['code'], message: string) {
    super(message);
    this.name = 'ScrapeError';
    this.code = code;
  }
}

/** The body of a metrics answer is at most this big (Sluice's is a few KiB per instance). */
export const MAX_SCRAPE_BYTES = 8 * 1024 * 1024;

/**
 * The metrics URL for what the operator typed: a URL whose path ends in `/metrics` is taken as it
 * is; any other (the MCP endpoint, e.g. http://127.0.0.1:3000/mcp) means `/metrics` on the same
 * origin, where `sluice serve --metrics` serves it. Throws a TypeError naming the input otherwise.
 */
export function metricsUrl(input: string): URL {
  let u: URL;
  try {
    u = new URL(input);
  } catch {
    throw new TypeError(`'${input}' is not a URL (expected e.g. http://127.0.0.1:3000/mcp)`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new TypeError(`'${input}' is not an http(s) URL`);
  }
  if (!u.pathname.endsWith('/metrics')) {
    u.pathname = '/metrics';
    u.search = '';
  }
  u.hash = '';
  return u;
}

/** GETs `url` and parses its Prometheus text; `now` stamps the snapshot (ms). */
export function scrape(url: URL, timeoutMs: number, now: () => number = Date.now): Promise<Snapshot> {
  // node:http rather than fetch: fetch refuses the ports on its "bad port" list (e.g. 6000), and a
  // metrics port is the operator's choice.
  const get = url.protocol === 'https:' ? httpsGet : httpGet;
  return new Promise<Snapshot>((resolve, reject) => {
    let settled = false;
    const fail = (e: ScrapeError): void => {
      if (settled) return;
      settled = true;
      req.destroy();
      reject(e);
    };
    const req = get(url, { headers: { accept: 'text/plain;version=0.0.4' }, agent: false }, (res) => {
      const status = res.statusCode ?? 0;
      if (status !== 200) {
        res.resume();
        const hint = status === 404 ? ' (is the server started with --metrics?)' : '';
        fail(new ScrapeError('SCRAPE_STATUS', `${url.href}: HTTP ${status}${hint}`));
        return;
      }
      const type = res.headers['content-type'] ?? '';
      const parser = new ExpositionParser();
      const decoder = new TextDecoder('utf-8', { fatal: true });
      let bytes = 0;
      const notText = (e: unknown): ScrapeError =>
        new ScrapeError(
          'SCRAPE_NOT_PROMETHEUS',
          `${url.href}: the answer is not Prometheus text (content-type '${type}'; ${
            e instanceof ExpositionError ? e.message : 'not UTF-8 text'
          })`,
        );
      res.on('data', (chunk: Buffer) => {
        if (settled) return;
        bytes += chunk.byteLength;
        if (bytes > MAX_SCRAPE_BYTES) {
          fail(
            new ScrapeError('SCRAPE_TOO_LARGE', `${url.href}: answer larger than ${MAX_SCRAPE_BYTES} bytes`),
          );
          return;
        }
        try {
          parser.push(decoder.decode(chunk, { stream: true }));
        } catch (e) {
          fail(notText(e));
        }
      });
      res.on('end', () => {
        if (settled) return;
        let e: Exposition;
        try {
          parser.push(decoder.decode());
          e = parser.end();
        } catch (err) {
          fail(notText(err));
          return;
        }
        if (!e.samples.some((x) => x.name.startsWith('sluice_'))) {
          fail(
            new ScrapeError(
              'SCRAPE_NOT_PROMETHEUS',
              `${url.href}: Prometheus text without any sluice_ metric (content-type '${type}')`,
            ),
          );
          return;
        }
        settled = true;
        clearTimeout(timer);
        resolve(new Snapshot(e, now()));
      });
      res.on('error', (err) => fail(new ScrapeError('SCRAPE_UNREACHABLE', `${url.href}: ${err.message}`)));
    });
    const timer = setTimeout(() => {
      fail(new ScrapeError('SCRAPE_UNREACHABLE', `${url.href}: no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      fail(new ScrapeError('SCRAPE_UNREACHABLE', `${url.href}: ${err.code ?? err.message}`));
    });
    req.on('close', () => clearTimeout(timer));
  });
}
