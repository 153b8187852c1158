/**
 * What an open, idle GET stream keeps of its own (docs/benchmarks.md, "RSS per idle session"): a
 * heap snapshot of one stream on a fake sink, counting the closures bound to each of the stream's
 * objects and the objects made only when needed. Exact counts: a closure, table or settled promise
 * added per stream shows up here before it shows up in the idle-memory bench.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { getHeapSnapshot } from 'node:v8';
import { EventStream } from '../../src/core/stream/event-stream.js';
import { FakeSink, nextTick, streamContext } from '../helpers/fake-sink.js';

interface Snapshot {
  snapshot: {
    meta: { node_fields: string[]; edge_fields: string[]; node_types: [string[]]; edge_types: [string[]] };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
}

async function snapshot(): Promise<Snapshot> {
  const chunks: Buffer[] = [];
  for await (const c of getHeapSnapshot()) chunks.push(c as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Snapshot;
}

/** Per object of the given class names: its outgoing edges, and the closures whose context's `this` it is. */
function census(s: Snapshot, classes: string[]) {
  const m = s.snapshot.meta;
  const nf = m.node_fields.length;
  const ef = m.edge_fields.length;
  const [types] = m.node_types;
  const [etypes] = m.edge_types;
  const iType = m.node_fields.indexOf('type');
  const iName = m.node_fields.indexOf('name');
  const iEdges = m.node_fields.indexOf('edge_count');
  const count = s.nodes.length / nf;
  const first = new Uint32Array(count + 1);
  for (let i = 0, e = 0; i < count; i++) {
    first[i] = e;
    e += (s.nodes[i * nf + iEdges] ?? 0) * ef;
  }
  first[count] = s.edges.length;
  const type = (i: number) => types[s.nodes[i * nf + iType] ?? 0];
  const name = (i: number) => s.strings[s.nodes[i * nf + iName] ?? 0] ?? '';
  const edges = (i: number) => {
    const out: { kind: string; name: string; to: number }[] = [];
    for (let e = first[i] ?? 0; e < (first[i + 1] ?? 0); e += ef) {
      const kind = etypes[s.edges[e] ?? 0] ?? '';
      const n = s.edges[e + 1] ?? 0;
      out.push({
        kind,
        name: kind === 'element' || kind === 'hidden' ? String(n) : (s.strings[n] ?? ''),
        to: (s.edges[e + 2] ?? 0) / nf,
      });
    }
    return out;
  };
  const found = new Map<number, string>();
  for (let i = 0; i < count; i++)
    if (type(i) === 'object' && classes.includes(name(i))) found.set(i, name(i));
  const closures = new Map<string, number>(classes.map((c) => [c, 0]));
  for (let i = 0; i < count; i++) {
    if (type(i) !== 'closure') continue;
    const ctx = edges(i).find((e) => e.name === 'context');
    if (ctx === undefined) continue;
    for (const e of edges(ctx.to)) {
      const owner = found.get(e.to);
      if (e.kind === 'context' && e.name === 'this' && owner !== undefined)
        closures.set(owner, (closures.get(owner) ?? 0) + 1);
    }
  }
  const instances = new Map<string, number>();
  const fields = new Map<string, Set<string>>();
  for (const [i, c] of found) {
    instances.set(c, (instances.get(c) ?? 0) + 1);
    const f = fields.get(c) ?? new Set();
    for (const e of edges(i))
      if (e.kind === 'property' && type(e.to) !== 'hidden') f.add(`${e.name}:${name(e.to)}`);
    fields.set(c, f);
  }
  return { closures, instances, fields };
}

test('an open, idle GET stream: no closure of the stream, one of its connection, none of its writer or log', async () => {
  const ctx = streamContext();
  const stream = new EventStream(ctx, 0, 'get');
  const sink = new FakeSink();
  assert.equal(await stream.resume(sink, { 'content-type': 'text/event-stream' }, undefined), 'ok');
  await nextTick();
  await new Promise((r) => setImmediate(r));
  const classes = ['EventStream', 'SseConnection', 'SseWriter', 'EventLog'];
  const { closures, instances, fields } = census(await snapshot(), classes);
  for (const c of classes) assert.equal(instances.get(c), 1, `one ${c}`);
  assert.deepEqual(Object.fromEntries(closures), {
    // The stream is the connection's owner (answer/connection.ts ConnectionOwner): no callbacks.
    EventStream: 0,
    // Its close listener on the sink, which tells its writer, the live set and its owner.
    SseConnection: 1,
    SseWriter: 0,
    EventLog: 0,
  });
  const held = [...(fields.get('EventStream') ?? [])];
  assert.deepEqual(
    held.filter((f) => /^#(waiters|resuming):/.test(f)),
    [],
    'no delivery waiters and no settled resume promise while idle',
  );
  assert.equal(stream.attached, true);
  ctx.store.close();
});
