// Every ```js and ```ts block in README.md and docs/*.md runs, as pasted, as an ES module inside this
// package (so `sluice/server` and `sluice/client` resolve to the build through the package's own exports).
//
// Conventions, written as an HTML comment on the line(s) just before the fence:
// - `<!-- snippet: skip (reason) -->`: not run; the reason is required (keep these rare).
// - `<!-- snippet: uses createMcp from "Use it" -->`: the README's `createMcp` (and its imports) is put in front.
// A snippet that prints `MCP endpoint: URL` lines is a server: each endpoint must serve a streaming
// tools/call (`reindex` with progress, or `summarize` with partial output), then SIGINT must make the process exit 0. Any other snippet must
// exit 0 by itself. `http://127.0.0.1:3000/mcp` in a snippet is replaced by a live demo server's URL.
// ```ts blocks run as JavaScript too (no type annotations in them), so they stay pasteable into an .mjs file.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { callToolStream, StreamableHttpClientTransport } from '../../src/client/index.js';
import { createDemoServer } from '../../src/demo/demo-server.js';
import { type Served, serve } from '../../src/server/index.js';
import { withDeadline } from '../helpers/deadline.js';
import { repoRoot } from '../helpers/spawn-serve.js';

const root = repoRoot();

interface Snippet {
  file: string;
  line: number;
  lang: string;
  code: string;
  marker: string | undefined;
}

function extract(file: string): Snippet[] {
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  const out: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(js|ts|javascript|typescript)\s*$/.exec(lines[i] ?? '');
    if (fence === null) continue;
    let j = i - 1;
    while (j >= 0 && (lines[j] ?? '').trim() === '') j--;
    const m = /^<!-- snippet: (.*) -->$/.exec((lines[j] ?? '').trim());
    const body: string[] = [];
    let k = i + 1;
    for (; k < lines.length && lines[k] !== '```'; k++) body.push(lines[k] ?? '');
    out.push({ file, line: i + 1, lang: fence[1] ?? 'js', code: body.join('\n'), marker: m?.[1] });
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

/** The README "Use it" block's imports of McpServer and zod plus its createMcp function. */
function createMcpPrelude(): string {
  const first = snippets.find((s) => s.file === 'README.md' && s.code.includes('function createMcp('));
  assert.ok(first !== undefined, 'README has a snippet defining createMcp');
  const fn = /^function createMcp\(\)[\s\S]*?^}$/m.exec(first.code)?.[0];
  assert.ok(fn !== undefined, 'createMcp is extractable');
  const imports = first.code.split('\n').filter((l) => /^import .*(sdk\/server\/mcp\.js|'zod')/.test(l));
  return `${imports.join('\n')}\n${fn}\n`;
}

interface Running {
  endpoints: string[];
  exit: Promise<number | null>;
  output(): string;
  kill(signal: NodeJS.Signals): void;
}

function start(path: string, expectedEndpoints: number): Promise<Running> {
  const child = spawn(process.execPath, [path], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const running: Running = {
      endpoints: [],
      exit,
      output: () => `stdout:\n${out}\nstderr:\n${err}`,
      kill: (signal) => child.kill(signal),
    };
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      running.endpoints = [...out.matchAll(/^MCP endpoint: (\S+)$/gm)].map((m) => m[1] ?? '');
      if (expectedEndpoints > 0 && running.endpoints.length >= expectedEndpoints) resolve(running);
    });
    exit.then(
      (code) => {
        if (expectedEndpoints === 0) resolve(running);
        else reject(new Error(`exited ${code} before printing its endpoints\n${running.output()}`));
      },
      () => {},
    );
  });
}

describe('README and docs snippets run as pasted', () => {
  let demo: Served;
  before(async () => {
    demo = await serve({ createServer: createDemoServer, port: 0 });
    mkdirSync(join(root, '.tmp', 'snippets'), { recursive: true });
  });
  after(async () => {
    await demo.close({ graceMs: 100 });
  });

  test('there are snippets, and every skip gives its reason', () => {
    assert.ok(snippets.length >= 8, `found ${snippets.length}`);
    for (const s of snippets) {
      if (s.marker === undefined) continue;
      assert.match(
        s.marker,
        /^(skip \(.+\)|uses createMcp from "Use it")$/,
        `${s.file}:${s.line}: ${s.marker}`,
      );
    }
    assert.ok(snippets.filter((s) => s.marker?.startsWith('skip')).length <= 2, 'skips stay rare');
  });

  for (const s of snippets) {
    const name = `${s.file}:${s.line}`;
    test(name, { skip: s.marker?.startsWith('skip') ? s.marker : false }, async () => {
      let code = s.code.replaceAll('http://127.0.0.1:3000/mcp', demo.url);
      if (s.marker === 'uses createMcp from "Use it"') code = createMcpPrelude() + code;
      const path = join(root, '.tmp', 'snippets', `${s.file.replace(/[/.]/g, '_')}_${s.line}.mjs`);
      writeFileSync(path, code);
      const expected = (s.code.match(/MCP endpoint: /g) ?? []).length;
      const running = await withDeadline(start(path, expected), 20_000, `${name} starting`);
      if (expected === 0) {
        assert.equal(await withDeadline(running.exit, 20_000, `${name} exit`), 0, running.output());
        return;
      }
      try {
        for (const url of running.endpoints) {
          const client = new Client({ name: 'snippet-test', version: '1.0.0' });
          await withDeadline(
            client.connect(new StreamableHttpClientTransport(new URL(url))),
            5_000,
            `${url} connect`,
          );
          const { tools } = await withDeadline(client.listTools(), 5_000, 'tools/list');
          if (tools.some((t) => t.name === 'summarize')) {
            // The partial-results snippet: its deltas, in order, are the final text.
            let streamed = '';
            let final = '';
            const parts = (async () => {
              for await (const part of callToolStream(client, {
                name: 'summarize',
                arguments: { topic: 'x' },
              })) {
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
          await withDeadline(client.close(), 5_000, 'client close');
        }
      } finally {
        running.kill('SIGINT');
      }
      assert.equal(
        await withDeadline(running.exit, 20_000, `${name} exit after SIGINT`),
        0,
        running.output(),
      );
    });
  }
});
