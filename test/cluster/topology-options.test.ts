// Naming the Redis: `redisCluster({ url | sentinel | cluster | link })` and `sluice serve --redis |
// --redis-sentinel | --redis-cluster` accept and refuse the same values (validated once, in
// topology.ts), and a bad value is a clear usage error before anything connects. Also the routing
// key the Cluster link sends each command by.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { redisCluster } from '../../src/cluster/cluster.js';
import { hashTag, keys, oneSlot } from '../../src/cluster/keys.js';
import { RedisUnavailableError } from '../../src/cluster/node-redis.js';
import {
  connectNodeRedisCluster,
  connectNodeRedisSentinel,
  routingKey,
} from '../../src/cluster/node-redis-ha.js';
import type { RedisLink } from '../../src/cluster/redis-link.js';
import { CrossSlotError, Script } from '../../src/cluster/scripts.js';
import { parseNodeList, parseSentinelSpec, topologyOf } from '../../src/cluster/topology.js';
import { InvalidOptionError } from '../../src/errors.js';
import { freePort } from '../helpers/daemon.js';
import { withDeadline } from '../helpers/deadline.js';
import { repoRoot } from '../helpers/spawn-serve.js';

const CLI = join(repoRoot(), 'dist', 'src', 'cli', 'main.js');

describe('Redis topology options', () => {
  test('sentinel and cluster specs parse to names and addresses (IPv6 bracketed)', () => {
    assert.deepEqual(parseSentinelSpec('x', 'mymaster@10.0.0.1:26379,sentinel-b:26380,[::1]:26381'), {
      kind: 'sentinel',
      name: 'mymaster',
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: 'sentinel-b', port: 26380 },
        { host: '::1', port: 26381 },
      ],
    });
    assert.deepEqual(parseNodeList('x', ' a:7000 , b:7001'), [
      { host: 'a', port: 7000 },
      { host: 'b', port: 7001 },
    ]);
    assert.deepEqual(topologyOf({ cluster: [{ host: '::1', port: 7000 }] }), {
      kind: 'cluster',
      nodes: [{ host: '::1', port: 7000 }],
    });
    assert.deepEqual(topologyOf({ sentinel: { name: 'm', sentinels: [{ host: 'h', port: 1 }] } }), {
      kind: 'sentinel',
      name: 'm',
      sentinels: [{ host: 'h', port: 1 }],
    });
    assert.deepEqual(topologyOf({ url: 'redis://h:6379' }), { kind: 'single', url: 'redis://h:6379' });
  });

  test('malformed values are refused with what was expected', () => {
    for (const [spec, reason] of [
      ['', /NAME@HOST:PORT/],
      ['h:1', /NAME@HOST:PORT/],
      ['@h:1', /NAME@HOST:PORT/],
      ['bad name@h:1', /NAME@HOST:PORT/],
      ['m@', /expected HOST:PORT/],
      ['m@h', /expected HOST:PORT \(port 1-65535\), got 'h'/],
      ['m@h:0', /got 'h:0'/],
      ['m@h:65536', /got 'h:65536'/],
      ['m@h:1,,h:2', /got ''/],
      ['m@h:1,h:1', /'h:1' is listed twice/],
      ['m@a@h:1', /got 'a@h:1'/],
    ] as const) {
      assert.throws(() => redisCluster({ sentinel: spec }), reason, spec);
    }
    for (const [spec, reason] of [
      ['', /HOST:PORT\[,HOST:PORT…\]/],
      ['h', /expected HOST:PORT/],
      ['h:x', /expected HOST:PORT/],
      ['http://h:1', /expected HOST:PORT/],
      [Array.from({ length: 65 }, (_, i) => `h:${i + 1}`).join(','), /1 to 64/],
    ] as const) {
      assert.throws(() => redisCluster({ cluster: spec }), reason, spec);
    }
    assert.throws(() => redisCluster({ url: 'http://h:6379' }), /redis:\/\/ or rediss:\/\//);
    assert.throws(() => redisCluster({ url: 'not a url' }), /expected redis:\/\/HOST:PORT/);
    assert.throws(
      () => redisCluster({}),
      /exactly one of \{ url \}, \{ sentinel \}, \{ cluster \} or \{ link \}/,
    );
    assert.throws(
      () => redisCluster({ url: 'redis://h:1', cluster: 'h:2' }),
      (e: unknown) => e instanceof InvalidOptionError && /exactly one of/.test(e.message),
    );
  });

  test('commands are routed by their first key; scripts by their first KEYS entry; COMMAND by none', () => {
    assert.equal(routingKey(['HMGET', 'sl:{s}', 'o']), 'sl:{s}');
    assert.equal(routingKey(['EVALSHA', 'abc', '2', 'sl:{s}:m:1', 'sl:{s}:l:1', '5']), 'sl:{s}:m:1');
    assert.equal(routingKey(['EVAL', 'return 1', '0']), undefined);
    assert.equal(routingKey(['SPUBLISH', 'sl:bus', '{}']), 'sl:bus');
    assert.equal(routingKey(['COMMAND', 'INFO', 'SPUBLISH']), undefined);
    assert.equal(routingKey(['DEL', 'sl:{s}:m:1', 'sl:{s}:l:1']), 'sl:{s}:m:1');
  });
});

describe('key layout for Redis Cluster', () => {
  test("every key of a session shares the session's hash tag; the others are their own", () => {
    const sid = 'aBc-123_x';
    const mine = [
      keys.session(sid),
      keys.streamMeta(sid, 1),
      keys.streamList(sid, 1),
      keys.streamMeta(sid, 42),
    ];
    assert.ok(mine.every((k) => hashTag(k) === sid));
    assert.ok(oneSlot(mine));
    assert.ok(!oneSlot([keys.session('a'), keys.session('b')]));
    assert.equal(hashTag(keys.lease('inc')), 'sl:inst:inc');
    assert.equal(hashTag('a{}b'), 'a{}b', 'an empty tag hashes the whole key');
    assert.equal(hashTag('a{x}{y}'), 'x', 'the first tag counts');
  });

  test('a script over keys of two tags is refused before anything is sent', async () => {
    const sent: string[][] = [];
    const link: RedisLink = {
      async send(args) {
        sent.push([...args]);
        return 1;
      },
      async close() {},
    };
    const script = new Script('return 1');
    await assert.rejects(script.run(link, [keys.session('a'), keys.streamMeta('b', 1)], []), CrossSlotError);
    assert.deepEqual(sent, []);
    assert.equal(await script.run(link, [keys.session('a'), keys.streamMeta('a', 1)], []), 1);
    assert.equal(sent.length, 1);
  });
});

describe('Sentinel and Cluster links with nothing to reach', () => {
  test('connecting rejects with RedisUnavailableError within its deadline (no hang, nothing left running)', async () => {
    const port = await freePort(); // nothing listens there
    const t0 = Date.now();
    await assert.rejects(
      withDeadline(
        connectNodeRedisSentinel({
          name: 'm',
          sentinels: [{ host: '127.0.0.1', port }],
          connectTimeoutMs: 200,
        }),
        20_000,
        'sentinel connect',
      ),
      (e: unknown) =>
        e instanceof RedisUnavailableError && /no sentinel of 127\.0\.0\.1:\d+ named/.test(e.message),
    );
    await assert.rejects(
      withDeadline(
        connectNodeRedisCluster({ nodes: [{ host: '127.0.0.1', port }], connectTimeoutMs: 200 }),
        20_000,
        'cluster connect',
      ),
      (e: unknown) => e instanceof RedisUnavailableError && /no Redis Cluster node of/.test(e.message),
    );
    assert.ok(Date.now() - t0 < 15_000);
  });
});

describe('sluice serve: Redis topology flags', () => {
  const run = (args: string[]) =>
    withDeadline(
      new Promise<{ code: number | null; err: string; out: string }>((resolve) => {
        const c = spawn(process.execPath, [CLI, 'serve', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
        let err = '';
        let out = '';
        c.stderr.on('data', (d: Buffer) => (err += d));
        c.stdout.on('data', (d: Buffer) => (out += d));
        c.on('exit', (code) => resolve({ code, err, out }));
      }),
      10_000,
      `sluice serve ${args.join(' ')}`,
    );

  test('malformed or conflicting values exit 2 naming the flag, before connecting to anything', async () => {
    for (const [args, reason] of [
      [['--redis-sentinel', 'h:26379'], /^sluice serve: --redis-sentinel: expected NAME@HOST:PORT/],
      [
        ['--redis-sentinel', 'm@h:0'],
        /^sluice serve: --redis-sentinel: expected HOST:PORT \(port 1-65535\), got 'h:0'/,
      ],
      [
        ['--redis-cluster', 'h'],
        /^sluice serve: --redis-cluster: expected HOST:PORT \(port 1-65535\), got 'h'/,
      ],
      [['--redis-cluster', 'h:1,h:1'], /^sluice serve: --redis-cluster: 'h:1' is listed twice/],
      [['--redis', 'http://h:1'], /^sluice serve: --redis: expected a redis:\/\/ or rediss:\/\/ URL/],
      [
        ['--redis', 'redis://h:1', '--redis-cluster', 'h:2'],
        /^sluice serve: --redis, --redis-sentinel and --redis-cluster exclude each other/,
      ],
      [['--advertise', 'http://h:1/mcp'], /--advertise needs --redis, --redis-sentinel or --redis-cluster/],
    ] as const) {
      const bad = await run([...args]);
      assert.equal(bad.code, 2, `${args.join(' ')}: ${bad.err}`);
      assert.match(bad.err, reason);
      assert.match(bad.err, /\nusage: sluice serve \[[^\n]*\nrun 'sluice serve --help' for the options\n$/);
      assert.equal(bad.out, '');
    }
    const help = await run(['--help']);
    assert.match(help.out, /--redis-sentinel NAME@HOST:PORT\[,HOST:PORT\.\.\.\]/);
    assert.match(help.out, /--redis-cluster HOST:PORT\[,HOST:PORT\.\.\.\]/);
  });
});
