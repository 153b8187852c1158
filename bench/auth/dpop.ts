// Section (k) of `npm run bench`: what the resource server spends per request on a DPoP-bound token
// (RFC 9449 §7), beside a plain Bearer JWT, in this process, on `oauthResourceServer().authenticate`
// itself (no HTTP: the echo cost of a request is section (a), with `--jwt` for Bearer). Variants,
// interleaved over repetitions, medians of CPU per request (process CPU: Web Crypto's work on
// libuv's threads counts):
//   bearer        an RS256 JWT, its verification remembered (jwtCacheEntries), as in production
//   dpop          a DPoP-bound RS256 JWT and a fresh ES256 proof per request
//   dpop+nonce    the same with server nonces (`dpopNonce`)
//   per-proof key the proof checked as before 2026-12-06: its key imported, its thumbprint and
//                 the token's hash computed for every proof (jose EmbeddedJWK, Web Crypto digests)
//   floor         one ES256 signature check by node:crypto on a key object: no parsing, no claims
// Proofs are signed before the measured loop (the client's cost is not the server's). Every loop is
// bounded in count.
import { createHash, createPublicKey, randomUUID, verify } from 'node:crypto';
import * as jose from 'jose';
import { oauthResourceServer } from '../../src/server/index.js';
import { BENCH_ISSUER, BENCH_RESOURCE, memoryFetch } from '../servers/jwt.js';

export interface DpopBench {
  requests: number;
  reps: number;
  /** µs of CPU per request, median over repetitions, by variant. */
  cpuUs: Record<Variant, number>;
}

const VARIANTS = ['bearer', 'dpop', 'dpop+nonce', 'per-proof key', 'floor'] as const;
type Variant = (typeof VARIANTS)[number];

const b64 = (text: string): string => createHash('sha256').update(text).digest('base64url');

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
}

export async function runDpop(quick: boolean, reps: number, log: (m: string) => void): Promise<DpopBench> {
  const requests = quick ? 400 : 1500;
  const as = await jose.generateKeyPair('RS256');
  const asJwk = { ...(await jose.exportJWK(as.publicKey)), kid: 'bench', alg: 'RS256', use: 'sig' };
  const fetch = memoryFetch(JSON.stringify({ keys: [asJwk] }));
  const holder = await jose.generateKeyPair('ES256');
  const holderJwk = await jose.exportJWK(holder.publicKey);
  const jkt = await jose.calculateJwkThumbprint(holderJwk, 'sha256');
  const token = async (cnf: boolean) =>
    new jose.SignJWT({ scope: 'mcp:tools', client_id: 'bench', ...(cnf ? { cnf: { jkt } } : {}) })
      .setProtectedHeader({ alg: 'RS256', kid: 'bench', typ: 'at+jwt' })
      .setIssuer(BENCH_ISSUER)
      .setAudience(BENCH_RESOURCE)
      .setSubject('bench')
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(as.privateKey);
  const bearer = await token(false);
  const bound = await token(true);
  const ath = b64(bound);
  const base = { resource: BENCH_RESOURCE, authorizationServers: [BENCH_ISSUER], fetch };
  const plainRs = oauthResourceServer(base);
  const nonceRs = oauthResourceServer({ ...base, dpopNonce: { key: 'bench-nonce-key-0123456789' } });
  const proofs = (n: number, nonce?: string): Promise<string[]> =>
    Promise.all(
      Array.from({ length: n }, () =>
        new jose.SignJWT({
          htm: 'POST',
          htu: BENCH_RESOURCE,
          ath,
          jti: randomUUID(),
          ...(nonce ? { nonce } : {}),
        })
          .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: holderJwk })
          .setIssuedAt()
          .sign(holder.privateKey),
      ),
    );
  const view = (authorization: string, dpop?: string) => ({
    method: 'POST',
    url: '/mcp',
    header: (n: string) => (n === 'authorization' ? authorization : n === 'dpop' ? dpop : undefined),
  });
  // The nonce to put in dpop+nonce's proofs: what its first refusal hands out.
  const asked = await nonceRs.authenticate(view(`DPoP ${bound}`, (await proofs(1))[0]));
  const nonce = 'status' in asked ? asked.headers?.['dpop-nonce'] : undefined;
  if (nonce === undefined) throw new Error('(k): the nonce server handed out no nonce');
  const floorKey = createPublicKey({ key: holderJwk as never, format: 'jwk' });

  const runs: Record<Variant, (n: number) => Promise<() => Promise<void>>> = {
    bearer: async () => async () => {
      const r = await plainRs.authenticate(view(`Bearer ${bearer}`));
      if ('status' in r) throw new Error(`(k) bearer refused: ${r.message}`);
    },
    dpop: async (n) => {
      const ps = await proofs(n);
      return async () => {
        const r = await plainRs.authenticate(view(`DPoP ${bound}`, ps.pop()));
        if ('status' in r) throw new Error(`(k) dpop refused: ${r.message}`);
      };
    },
    'dpop+nonce': async (n) => {
      const ps = await proofs(n, nonce);
      return async () => {
        const r = await nonceRs.authenticate(view(`DPoP ${bound}`, ps.pop()));
        if ('status' in r) throw new Error(`(k) dpop+nonce refused: ${r.message}`);
      };
    },
    'per-proof key': async (n) => {
      const ps = await proofs(n);
      return async () => {
        const p = ps.pop() as string;
        const header = jose.decodeProtectedHeader(p);
        const { payload } = await jose.jwtVerify(p, jose.EmbeddedJWK, {
          typ: 'dpop+jwt',
          algorithms: ['ES256'],
        });
        const thumb = await jose.calculateJwkThumbprint(header.jwk as jose.JWK, 'sha256');
        const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(bound)));
        if (thumb !== jkt || payload['ath'] === undefined || digest.length !== 32)
          throw new Error('(k) per-proof');
      };
    },
    floor: async (n) => {
      const ps = await proofs(n);
      return async () => {
        const [h, body, sig] = (ps.pop() as string).split('.');
        const ok = verify(
          'sha256',
          Buffer.from(`${h}.${body}`),
          { key: floorKey, dsaEncoding: 'ieee-p1363' },
          Buffer.from(sig ?? '', 'base64url'),
        );
        if (!ok) throw new Error('(k) floor');
      };
    },
  };
  const samples: Record<Variant, number[]> = {
    bearer: [],
    dpop: [],
    'dpop+nonce': [],
    'per-proof key': [],
    floor: [],
  };
  for (let rep = 0; rep < reps + 1; rep++) {
    // The order rotates; repetition 0 warms every path and is not kept.
    for (let k = 0; k < VARIANTS.length; k++) {
      const v = VARIANTS[(k + rep) % VARIANTS.length] as Variant;
      const step = await runs[v](requests);
      const t0 = process.cpuUsage();
      for (let i = 0; i < requests; i++) await step();
      const u = process.cpuUsage(t0);
      if (rep > 0) samples[v].push((u.user + u.system) / requests);
    }
    if (rep > 0)
      log(
        `(k) repetition ${rep}/${reps}: dpop ${samples.dpop.at(-1)?.toFixed(0)} µs, bearer ${samples.bearer.at(-1)?.toFixed(0)} µs`,
      );
  }
  const cpuUs = Object.fromEntries(VARIANTS.map((v) => [v, median(samples[v])])) as Record<Variant, number>;
  return { requests, reps, cpuUs };
}

export function renderDpop(r: DpopBench): string {
  const c = r.cpuUs;
  const row = (v: Variant, what: string) =>
    `| ${v} | ${what} | ${c[v].toFixed(0)} µs | ${(c[v] / c.floor).toFixed(2)}x |`;
  return [
    '## (k) DPoP at the resource server',
    '',
    `CPU per \`authenticate\` call in this process, ${r.requests} requests per cell, median of ${r.reps} repetitions (order rotating); proofs signed beforehand:`,
    '',
    '| variant | what | CPU per request | ÷ floor |',
    '|---|---|---:|---:|',
    row('bearer', 'an RS256 JWT, verification remembered'),
    row('dpop', 'a DPoP-bound JWT and a fresh ES256 proof'),
    row('dpop+nonce', 'the same with server nonces'),
    row('per-proof key', 'the proof checked as before 2026-12-06 (key imported, digests, per proof)'),
    row('floor', 'one ES256 signature check, node:crypto'),
    '',
    `A proof costs ${(c.dpop - c.bearer).toFixed(0)} µs over a Bearer token; the per-proof-key path ${(c['per-proof key'] / Math.max(1, c.dpop - c.bearer)).toFixed(1)}x that.`,
    '',
  ].join('\n');
}
