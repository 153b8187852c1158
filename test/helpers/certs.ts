/**
 * A throwaway self-signed certificate for 127.0.0.1 and localhost, made with the system's openssl
 * in a temp dir. Undefined (with the reason) when openssl cannot run, so a suite can skip loudly.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCert {
  key: Buffer;
  cert: Buffer;
  keyFile: string;
  certFile: string;
  remove(): void;
}

export function makeCert(): TestCert | string {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-cert-'));
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  const r = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ],
    { encoding: 'utf8', timeout: 20_000 },
  );
  if (r.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    return `openssl could not make a certificate: ${r.error?.message ?? r.stderr}`;
  }
  return {
    key: readFileSync(keyFile),
    cert: readFileSync(certFile),
    keyFile,
    certFile,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
