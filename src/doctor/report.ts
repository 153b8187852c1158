/** Renders a DoctorReport: one verdict line per check, then the fixes that apply. */
import type { DoctorReport, Fix } from './types.js';

const WHERE: Record<keyof Fix, string> = {
  nginx: 'nginx',
  haproxy: 'HAProxy',
  caddy: 'Caddy',
  alb: 'AWS ALB',
  cloudflare: 'Cloudflare',
  server: 'server',
};

export function renderText(r: DoctorReport): string {
  const width = Math.max(...r.verdicts.map((v) => v.id.length));
  const lines = [`sluice doctor ${r.url}`];
  for (const v of r.verdicts) {
    lines.push(`${v.status.padEnd(4)}  ${v.id.padEnd(width)}  ${v.reason}`);
    if (v.fix !== undefined && v.status !== 'ok') {
      for (const [k, text] of Object.entries(v.fix)) {
        lines.push(`${' '.repeat(width + 8)}fix (${WHERE[k as keyof Fix]}): ${text}`);
      }
    }
  }
  const failed = r.verdicts.filter((v) => v.status === 'fail').length;
  const warned = r.verdicts.filter((v) => v.status === 'warn').length;
  lines.push(
    failed === 0 ? `no failures${warned > 0 ? `, ${warned} warning(s)` : ''}` : `${failed} check(s) failed`,
  );
  return `${lines.join('\n')}\n`;
}

export function renderJson(r: DoctorReport): string {
  return `${JSON.stringify(r, null, 2)}\n`;
}
