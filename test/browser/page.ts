/**
 * The browser test page's script (bundled by esbuild for the browser, see test/browser/browser.test.ts and
 * docs/client.md): the SDK `Client` over Sluice's `StreamableHttpClientTransport` (the package.json `browser`
 * map gives it the `fetch` adapter), driven by Playwright through `window.sluiceTest`, rendering what it sees.
 */
import { Client as V2Client } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHttpClientTransport } from '../../src/client/index.js';

interface Timeline {
  readonly index: number;
  readonly started: number;
  firstProgress: number | undefined;
  ended: number | undefined;
  progress: number;
}

let client: Client | undefined;
let transport: StreamableHttpClientTransport | undefined;

function el(tag: string, text = '', cls = ''): HTMLElement {
  const e = document.createElement(tag);
  e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

function log(text: string): void {
  document.getElementById('log')?.append(el('div', text));
}

function bar(label: string): { update(value: number, max: number, note?: string): void } {
  const row = el('div', '', 'row');
  const name = el('span', label, 'label');
  const meter = document.createElement('progress');
  const note = el('span', '', 'note');
  row.append(name, meter, note);
  document.getElementById('bars')?.append(row);
  return {
    update(value, max, text) {
      meter.max = max;
      meter.value = value;
      note.textContent = text ?? `${value}/${max}`;
    },
  };
}

function textOf(result: unknown): string {
  const first = (result as { content?: { type: string; text?: string }[] }).content?.[0];
  return first?.type === 'text' ? (first.text ?? '') : JSON.stringify(result);
}

function connected(): Client {
  if (client === undefined) throw new Error('not connected');
  return client;
}

const api = {
  async connect(
    url: string,
  ): Promise<{ sessionId: string | undefined; protocolVersion: string | undefined }> {
    client = new Client({ name: 'sluice-browser-test', version: '0.0.0' });
    transport = new StreamableHttpClientTransport(url);
    await client.connect(transport);
    log(
      `connected to ${url}: session ${transport.sessionId ?? 'none'}, revision ${transport.protocolVersion}`,
    );
    return { sessionId: transport.sessionId, protocolVersion: transport.protocolVersion };
  },

  async listTools(): Promise<string[]> {
    const { tools } = await connected().listTools();
    log(`tools/list: ${tools.map((t) => t.name).join(', ')}`);
    return tools.map((t) => t.name);
  },

  async reindex(docs: number, delayMs: number): Promise<{ text: string; updates: number; last: number }> {
    const b = bar(`reindex ${docs}`);
    let updates = 0;
    let last = 0;
    const result = await connected().callTool(
      { name: 'reindex', arguments: { corpus: 'browser', docs, delayMs } },
      undefined,
      {
        onprogress: (p) => {
          updates++;
          last = p.progress;
          b.update(p.progress, p.total ?? docs, p.message);
        },
      },
    );
    log(`reindex: ${textOf(result)} after ${updates} progress updates`);
    return { text: textOf(result), updates, last };
  },

  /** Starts a long reindex and aborts it through an AbortSignal after `after` progress updates. */
  async cancel(after: number): Promise<{ error: string; seen: number }> {
    const b = bar('cancel');
    const controller = new AbortController();
    let seen = 0;
    try {
      await connected().callTool(
        { name: 'reindex', arguments: { corpus: 'cancelled', docs: 4000, delayMs: 10 } },
        undefined,
        {
          signal: controller.signal,
          onprogress: (p) => {
            seen++;
            b.update(p.progress, p.total ?? 4000, `${p.progress} (cancelling at ${after})`);
            if (seen === after) controller.abort(new Error('cancelled by the page'));
          },
        },
      );
      throw new Error('the cancelled call resolved');
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      b.update(seen, 4000, `cancelled after ${seen}: ${message}`);
      log(`cancel: ${message}`);
      return { error: message, seen };
    }
  },

  /** `test_reconnection` closes its own stream before the result: the transport resumes it with Last-Event-ID. */
  async resume(): Promise<string> {
    const result = await connected().callTool({ name: 'test_reconnection', arguments: {} });
    log(`resume: ${textOf(result)}`);
    return textOf(result);
  },

  /** `n` streaming calls at once; returns when each got its first progress and its result (page clock). */
  async concurrent(n: number, docs: number, delayMs: number): Promise<Timeline[]> {
    const origin = performance.now();
    const timelines: Timeline[] = [];
    await Promise.all(
      Array.from({ length: n }, async (_, index) => {
        const t: Timeline = { index, started: 0, firstProgress: undefined, ended: undefined, progress: 0 };
        timelines.push(t);
        const b = bar(`call ${index + 1}`);
        b.update(0, docs, 'waiting for a connection');
        await connected().callTool(
          { name: 'reindex', arguments: { corpus: `c${index}`, docs, delayMs } },
          undefined,
          {
            onprogress: (p) => {
              t.firstProgress ??= performance.now() - origin;
              t.progress = p.progress;
              b.update(p.progress, docs);
            },
            timeout: 120_000,
          },
        );
        t.ended = performance.now() - origin;
        b.update(
          docs,
          docs,
          `done at ${Math.round(t.ended)} ms (first progress ${Math.round(t.firstProgress ?? 0)} ms)`,
        );
      }),
    );
    timelines.sort((a, b) => a.index - b.index);
    return timelines;
  },

  /** SDK v2's Client over the same transport, negotiating the era (`server/discover` first). */
  async v2Echo(url: string, region: string): Promise<{ era: string | undefined; text: string }> {
    const v2 = new V2Client(
      { name: 'sluice-browser-v2', version: '0.0.0' },
      { versionNegotiation: { mode: 'auto' } },
    );
    await v2.connect(new StreamableHttpClientTransport(url));
    try {
      const era = v2.getProtocolEra();
      // SDK v2 does not mirror x-mcp-header arguments into Mcp-Param-* headers in a browser; Sluice's transport
      // does, from the declarations it sees in this tools/list.
      await v2.listTools();
      const result = await v2.callTool({ name: 'echo', arguments: { text: 'from the browser', region } });
      log(`SDK v2 Client, ${era} era: ${textOf(result)}`);
      return { era, text: textOf(result) };
    } finally {
      await v2.close();
    }
  },

  async close(): Promise<void> {
    await client?.close();
  },
};

// Node's test runner also loads every file under test/ (its default pattern): do nothing outside a page.
if (typeof window !== 'undefined' && typeof document !== 'undefined') {
  (window as unknown as { sluiceTest: typeof api }).sluiceTest = api;
  document.getElementById('status')?.replaceChildren('ready');
}
