// Every ```js and ```ts block in README.md and docs/*.md runs, as pasted, as an ES module inside this
// package (so `sluice/server`, `sluice/client` and `sluice/fetch` resolve to the build through the package's
// own exports). Each snippet runs in its own empty directory under .tmp/snippets/ (inside the package).
//
// Conventions, written as HTML comments on the line(s) just before the fence (several may be stacked):
// - `<!-- snippet: skip (reason) -->`: not run; the reason is required (at most 2 in the repo).
// - `<!-- snippet: uses createMcp from "Use it" -->`: the README's `createMcp` (and its imports) is put in front.
// - `<!-- snippet: runtime bun -->` / `runtime deno` / `runtime workerd`: runs in that runtime, with the
//   binaries the repo installs as devDependencies: `bun snippet.mjs`; `deno run --allow-all` with an import
//   map sending `npm:sluice/*` to the build (other packages come from node_modules); workerd: the snippet is
//   a module Worker (`export default { fetch }`), bundled with esbuild and served by miniflare
//   (test/runtimes/snippet-workerd.mjs). A runtime that cannot start here is skipped loudly; with
//   SLUICE_REQUIRE_RUNTIMES=1 (as .ci/run sets) that is a failure.
// - `<!-- snippet: bad bodies -->`: each endpoint is also sent a truncated JSON body and a 5 MB body; both must be
//   answered with a JSON-RPC error in a JSON body, with no stack trace and no file path in it, and the snippet's
//   output must hold no stack trace either (the framework examples: their error pages must not leak).
// - `<!-- snippet: route-handler -->`: the snippet is a route module (Next.js App Router style: exported
//   `GET`/`POST`/`DELETE`/`OPTIONS` taking a `Request`); it is imported under Node and served through a
//   node:http ↔ Request/Response adapter (test/runtimes/snippet-route-handler.mjs).
// A snippet that prints `MCP endpoint: URL` lines is a server (workerd and route-handler snippets are
// servers by construction): each endpoint must serve a streaming tools/call (`reindex` with progress, or
// `summarize` with partial output; `deploy` is also driven through its elicitation round), then the signal
// it handles (SIGINT, or SIGTERM when it handles only that) must make the process exit 0. Any other
// snippet must exit 0 by itself. Substitutions: `http://127.0.0.1:3000/mcp` becomes a live demo server's
// URL; `redis://redis:6379` a redis-server started for the file (skipped loudly without redis-server);
// `key.pem`/`cert.pem` exist in the snippet's directory (a self-signed certificate for 127.0.0.1, which the
// test's client trusts). ```ts blocks run as JavaScript too (no type annotations in them), so they stay
// pasteable into an .mjs file.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Agent, fetch as undiciFetch } from 'undici';
import { callToolStream, StreamableHttpClientTransport } from '../../src/client/index.js';
import { createDemoServer } from '../../src/demo/demo-server.js';
import { type Served, serve } from '../../src/server/index.js';
import { makeCert, type TestCert } from '../helpers/certs.js';
import { withDeadline } from '../helpers/deadline.js';
import { reapWithMe } from '../helpers/reaper.js';
import { findRedis, type Redis, startRedis } from '../helpers/redis.js';
import { repoRoot } from '../helpers/spawn-serve.js';

const root = repoRoot();
const REQUIRE = process.env['SLUICE_REQUIRE_RUNTIMES'] === '1';

interface Snippet {
  file: string;
  line: number;
  lang: string;
  code: string;
  markers: string[];
}

function extract(file: string): Snippet[] {
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  const out: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(js|ts|javascript|typescript)\s*$/.exec(lines[i] ?? '');
    if (fence === null) continue;
    let j = i - 1;
    while (j >= 0 && (lines[j] ?? '').trim() === '') j--;
    const markers: string[] = [];
    for (let m = /^<!-- snippet: (.*) -->$/.exec((lines[j] ?? '').trim()); m !== null; ) {
      markers.unshift(m[1] ?? '');
      j--;
      m = /^<!-- snippet: (.*) -->$/.exec((lines[j] ?? '').trim());
    }
    const body: string[] = [];
    let k = i + 1;
    for (; k < lines.length && lines[k] !== '```'; k++) body.push(lines[k] ?? '');
    out.push({ file, line: i + 1, lang: fence[1] ?? 'js', code: body.join('\n'), markers });
    i = k;
  }
  return out;
}

const files = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const snippets = files.flatMap(extract);
const MARKER =
  /^(skip \(.+\)|uses createMcp from "Use it"|runtime (bun|deno|workerd)|route-handler|bad bodies)$/;
const USES_CREATE_MCP = 'uses createMcp from "Use it"';
const BAD_BODIES = 'bad bodies';

/** The README "Use it" block's imports of McpServer and zod plus its createMcp function. */
function createMcpPrelude(): string {
  const first = snippets.find((s) => s.file === 'README.md' && s.code.includes('function createMcp('));
  assert.ok(first !== undefined, 'README has a snippet defining createMcp');
  const fn = /^function createMcp\(\)[\s\S]*?^}$/m.exec(first.code)?.[0];
  assert.ok(fn !== undefined, 'createMcp is extractable');
  const imports = first.code.split('\n').filter((l) => /^import .*(sdk\/server\/mcp\.js|'zod')/.test(l));
  return `${imports.join('\n')}\n${fn}\n`;
}

const bin = (name: string): string => join(root, 'node_modules', '.bin', name);
const runnerScript = (name: string): string => join(root, 'test', 'runtimes', name);

/** How a snippet is started, and what must run for it. */
interface Launch {
  command: string;
  args: string[];
  /** The snippet always serves (the runner prints its endpoint). */
  server: boolean;
  /** Binary that must run, and its version flag, when the snippet needs a runtime other than this Node. */
  probe?: [string, string[]];
}

function launch(s: Snippet, path: string, dir: string): Launch {
  if (s.markers.includes('runtime bun')) {
    return { command: bin('bun'), args: [path], server: false, probe: [bin('bun'), ['--version']] };
  }
  if (s.markers.includes('runtime deno')) {
    // A Deno user imports `npm:sluice/fetch`; here the import map sends it to this checkout's build.
    const importMap = join(dir, 'import-map.json');
    writeFileSync(
      importMap,
      JSON.stringify({
        imports: {
          'npm:sluice/fetch': `${new URL(`file://${join(root, 'dist', 'src', 'fetch', 'index.js')}`)}`,
          'npm:sluice/server': `${new URL(`file://${join(root, 'dist', 'src', 'server', 'index.js')}`)}`,
        },
      }),
    );
    return {
      command: bin('deno'),
      args: ['run', '--allow-all', '--no-prompt', `--import-map=${importMap}`, path],
      server: false,
      probe: [bin('deno'), ['--version']],
    };
  }
  if (s.markers.includes('runtime workerd')) {
    return {
      command: process.execPath,
      args: [runnerScript('snippet-workerd.mjs'), path],
      server: true,
      probe: [bin('workerd'), ['--version']],
    };
  }
  if (s.markers.includes('route-handler')) {
    return {
      command: process.execPath,
      args: [runnerScript('snippet-route-handler.mjs'), path],
      server: true,
    };
  }
  return { command: process.execPath, args: [path], server: false };
}

/** Why the runtime cannot run here, or undefined when it can. */
function unavailable(probe: [string, string[]] | undefined): string | undefined {
  if (probe === undefined) return undefined;
  const [cmd, args] = probe;
  if (!existsSync(cmd)) return `${cmd} is missing (run 'npm ci')`;
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 20_000 });
  if (r.status !== 0) return `${cmd} ${args.join(' ')} failed: ${r.error?.message ?? r.stderr.slice(-500)}`;
  return undefined;
}

interface Running {
  endpoints: string[];
  exit: Promise<number | null>;
  output(): string;
  kill(signal: NodeJS.Signals): void;
}

/** Starts the snippet; `ready` resolves once it printed its endpoints (or exited, for a non-server). */
function start(
  l: Launch,
  cwd: string,
  expectedEndpoints: number,
): { running: Running; ready: Promise<void> } {
  // Its own process group, so a runtime's helpers (miniflare's workerd) can be killed with it.
  const child = spawn(l.command, l.args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  reapWithMe(child, 'SIGTERM', true);
  let out = '';
  let err = '';
  const exit = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', () => resolve(null));
  });
  const running: Running = {
    endpoints: [],
    exit,
    output: () => `stdout:\n${out}\nstderr:\n${err.slice(-8000)}`,
    kill: (signal) => {
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
      // The snippet (or runner) gets the signal it handles; SIGKILL (cleanup) takes the whole group.
      if (signal !== 'SIGKILL') {
        child.kill(signal);
        return;
      }
      try {
        process.kill(-child.pid, signal);
      } catch {
        child.kill(signal);
      }
    },
  };
  const ready = new Promise<void>((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      running.endpoints = [...out.matchAll(/^MCP endpoint: (\S+)$/gm)].map((m) => m[1] ?? '');
      if (expectedEndpoints > 0 && running.endpoints.length >= expectedEndpoints) resolve();
    });
    exit.then(
      (code) => {
        if (expectedEndpoints === 0) resolve();
        else reject(new Error(`exited ${code} before printing its endpoints\n${running.output()}`));
      },
      () => {},
    );
  });
  return { running, ready };
}

/** A transport for the endpoint; https endpoints (the TLS snippets) trust the test certificate. */
function transportFor(url: string, cert: TestCert | undefined): StreamableHttpClientTransport {
  if (!url.startsWith('https:')) return new StreamableHttpClientTransport(new URL(url));
  assert.ok(cert !== undefined, 'an https endpoint needs the test certificate');
  const dispatcher = new Agent({ allowH2: true, connect: { ca: cert.cert } });
  return new StreamableHttpClientTransport(new URL(url), {
    fetch: ((input: string | URL, init?: RequestInit) =>
      undiciFetch(input, { ...(init as object), dispatcher })) as unknown as typeof fetch,
  });
}

/** Drives a streaming tools/call (and the MRTR `deploy` tool when served) against one endpoint. */
async function driveEndpoint(url: string, cert: TestCert | undefined): Promise<void> {
  const client = new Client(
    { name: 'snippet-test', version: '1.0.0' },
    { capabilities: { elicitation: {} } },
  );
  let elicited = 0;
  client.setRequestHandler(ElicitRequestSchema, () => {
    elicited++;
    return { action: 'accept', content: { ok: true } };
  });
  await withDeadline(client.connect(transportFor(url, cert)), 10_000, `${url} connect`);
  try {
    const { tools } = await withDeadline(client.listTools(), 5_000, 'tools/list');
    if (tools.some((t) => t.name === 'summarize')) {
      // The partial-results snippet: its deltas, in order, are the final text.
      let streamed = '';
      let final = '';
      const parts = (async () => {
        for await (const part of callToolStream(client, { name: 'summarize', arguments: { topic: 'x' } })) {
          if (part.type === 'partial') streamed += part.text;
          else if (part.type === 'result') final = JSON.stringify(part.result.content);
        }
      })();
      await withDeadline(parts, 10_000, `${url} summarize`);
      assert.ok(streamed.length > 0, 'partial output arrived');
      assert.equal(final, JSON.stringify([{ type: 'text', text: streamed }]));
    } else {
      assert.ok(
        tools.some((t) => t.name === 'reindex'),
        `${url} lists reindex (or summarize)`,
      );
      let progress = 0;
      const result = await withDeadline(
        client.callTool({ name: 'reindex', arguments: { corpus: 'snippets' } }, undefined, {
          onprogress: () => progress++,
        }),
        10_000,
        `${url} reindex`,
      );
      assert.deepEqual(result.content, [{ type: 'text', text: 'reindexed snippets' }]);
      assert.ok(progress > 0, 'progress arrived');
    }
    if (tools.some((t) => t.name === 'deploy')) {
      // The MRTR snippet on a legacy session: its input request arrives as elicitation/create.
      const result = await withDeadline(
        client.callTool({ name: 'deploy', arguments: { env: 'staging' } }),
        10_000,
        `${url} deploy`,
      );
      assert.deepEqual(result.content, [{ type: 'text', text: 'deployed staging' }]);
      assert.equal(elicited, 1, 'one elicitation round');
    }
  } finally {
    await withDeadline(client.close(), 5_000, 'client close');
  }
}

/**
 * One POST with a raw body. The headers go first and the body only after a pause without an answer (what
 * `Expect: 100-continue` is for, RFC 9110 §10.1.1), then in chunks, stopped as soon as the answer arrives: a
 * server refuses an oversized body by its Content-Length before reading it and closes the connection, and a
 * client still uploading then gets a reset instead of the answer.
 */
/** How long a POST's headers wait alone for an answer (a refusal by Content-Length) before its body is sent. */
const EARLY_ANSWER_MS = 2_000;

async function postRaw(url: string, body: Buffer): Promise<{ status: number; type: string; text: string }> {
  let answered = false;
  let wake: (() => void) | undefined;
  const req = httpRequest(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'content-length': String(body.length),
    },
  });
  const answer = new Promise<{ status: number; type: string; text: string }>((resolve, reject) => {
    req.on('response', (res) => {
      answered = true;
      wake?.();
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        text += d;
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'] ?? '', text }),
      );
      res.on('error', reject);
    });
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
  });
  req.flushHeaders();
  await new Promise<void>((resolve) => {
    wake = resolve;
    setTimeout(resolve, EARLY_ANSWER_MS).unref();
  });
  for (let at = 0; at < body.length && !answered; at += 64 * 1024) {
    const more = req.write(body.subarray(at, at + 64 * 1024));
    // Let the answer in between chunks, and wait for the socket to drain (or for the answer).
    await new Promise<void>((resolve) => {
      wake = resolve;
      if (more) setImmediate(resolve);
      else req.once('drain', resolve);
    });
  }
  if (answered) req.destroy();
  else req.end();
  return answer;
}

/** A stack-trace frame or a file path: what an error answer must not show. */
const LEAK = /\n\s+at \S|\/[\w.-]+\/[\w./-]+\.(?:m?js|ts)\b|node_modules/;

/** A truncated JSON body and a 5 MB one each get a JSON-RPC error in JSON, without a stack trace or a path. */
async function checkBadBodies(url: string): Promise<void> {
  const truncated = Buffer.from('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVers');
  const huge = Buffer.from(
    JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { pad: 'x'.repeat(5_000_000) } }),
  );
  for (const [label, body] of [
    ['truncated JSON', truncated],
    ['5 MB', huge],
  ] as const) {
    const r = await withDeadline(postRaw(url, body), 10_000, `${url} ${label} body`);
    const what = `${label} body: ${r.status} ${r.type} ${r.text.slice(0, 300)}`;
    assert.ok(r.status >= 400 && r.status < 500, what);
    assert.match(r.type, /^application\/json/, what);
    const answer = JSON.parse(r.text) as { jsonrpc?: unknown; error?: { code?: unknown; message?: unknown } };
    assert.equal(answer.jsonrpc, '2.0', what);
    assert.equal(typeof answer.error?.code, 'number', what);
    assert.equal(typeof answer.error?.message, 'string', what);
    assert.doesNotMatch(r.text, LEAK, what);
  }
}

describe('README and docs snippets run as pasted', () => {
  let demo: Served;
  let cert: TestCert | undefined;
  let redis: Redis | undefined;
  const base = join(root, '.tmp', 'snippets');
  before(async () => {
    demo = await serve({ createServer: createDemoServer, port: 0 });
    rmSync(base, { recursive: true, force: true });
    mkdirSync(base, { recursive: true });
  });
  after(async () => {
    await demo.close({ graceMs: 100 });
    cert?.remove();
    await redis?.stop();
  });

  test('there are snippets, every marker is known, and every skip gives its reason', () => {
    assert.ok(snippets.length >= 8, `found ${snippets.length}`);
    for (const s of snippets) {
      for (const m of s.markers) assert.match(m, MARKER, `${s.file}:${s.line}: ${m}`);
    }
    assert.ok(
      snippets.filter((s) => s.markers.some((m) => m.startsWith('skip'))).length <= 2,
      'skips stay rare',
    );
  });

  for (const s of snippets) {
    const name = `${s.file}:${s.line}`;
    const skip = s.markers.find((m) => m.startsWith('skip'));
    test(name, { skip: skip ?? false }, async (t) => {
      const dir = join(base, `${s.file.replace(/[/.]/g, '_')}_${s.line}`);
      mkdirSync(dir, { recursive: true });
      const path = join(dir, 'snippet.mjs');
      const l = launch(s, path, dir);
      const missing = unavailable(l.probe);
      if (missing !== undefined) {
        if (REQUIRE) assert.fail(`${name} cannot run (SLUICE_REQUIRE_RUNTIMES=1): ${missing}`);
        process.stderr.write(`\n*** SKIPPED ${name}: ${missing}\n\n`);
        t.skip(`SKIPPED: ${missing}`);
        return;
      }
      let code = s.code.replaceAll('http://127.0.0.1:3000/mcp', demo.url);
      if (code.includes('redis://redis:6379')) {
        if (findRedis() === undefined) {
          process.stderr.write(`\n*** SKIPPED ${name}: redis-server not installed\n\n`);
          t.skip('SKIPPED: redis-server not installed — .ci/run installs it');
          return;
        }
        redis ??= await withDeadline(startRedis(), 20_000, 'redis-server starting');
        code = code.replaceAll('redis://redis:6379', redis.url);
      }
      if (/\b(key|cert)\.pem\b/.test(code)) {
        if (cert === undefined) {
          const made = makeCert();
          if (typeof made === 'string') {
            process.stderr.write(`\n*** SKIPPED ${name}: ${made}\n\n`);
            t.skip(`SKIPPED: ${made}`);
            return;
          }
          cert = made;
        }
        copyFileSync(cert.keyFile, join(dir, 'key.pem'));
        copyFileSync(cert.certFile, join(dir, 'cert.pem'));
      }
      if (s.markers.includes(USES_CREATE_MCP)) code = createMcpPrelude() + code;
      writeFileSync(path, code);
      const expected = l.server ? 1 : (s.code.match(/MCP endpoint: /g) ?? []).length;
      const { running, ready } = start(l, dir, expected);
      try {
        await withDeadline(ready, 60_000, `${name} starting`);
        if (expected === 0) {
          assert.equal(await withDeadline(running.exit, 20_000, `${name} exit`), 0, running.output());
          return;
        }
      } catch (err) {
        running.kill('SIGKILL');
        throw err;
      }
      const signal = /SIGINT/.test(s.code) || !/SIGTERM/.test(s.code) ? 'SIGINT' : 'SIGTERM';
      try {
        for (const url of running.endpoints) {
          await driveEndpoint(url, cert);
          if (s.markers.includes(BAD_BODIES)) await checkBadBodies(url);
        }
      } catch (err) {
        running.kill('SIGKILL');
        throw new Error(`${err instanceof Error ? err.message : String(err)}\n${running.output()}`, {
          cause: err,
        });
      }
      running.kill(signal);
      try {
        assert.equal(
          await withDeadline(running.exit, 20_000, `${name} exit after ${signal}`),
          0,
          running.output(),
        );
        if (s.markers.includes(BAD_BODIES)) {
          assert.doesNotMatch(running.output(), /\n\s+at \S/, 'bad bodies logged no stack trace');
        }
      } finally {
        running.kill('SIGKILL');
      }
    });
  }
});
