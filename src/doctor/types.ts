/** The doctor's vocabulary: one verdict per check, with the concrete fix where one applies. */

export type Status = 'ok' | 'warn' | 'fail' | 'skip';

/** Concrete changes, per place they are made. Only the places that apply to the finding are set. */
export interface Fix {
  nginx?: string;
  haproxy?: string;
  caddy?: string;
  alb?: string;
  cloudflare?: string;
  /** The MCP server itself (Sluice option names, where it is Sluice). */
  server?: string;
}

export interface Verdict {
  /** Stable id, e.g. 'buffering' (used by --json consumers and tests). */
  id: string;
  status: Status;
  /** One short line: what was seen, and what it means. */
  reason: string;
  /** Measurements behind the reason (ms timings, header values, status codes). */
  details?: Record<string, unknown>;
  fix?: Fix;
}

export interface DoctorOptions {
  url: string;
  /** Headers sent on every request (e.g. Authorization). */
  headers?: Record<string, string>;
  /** How long the idle stream is held open. @defaultValue 65 */
  idleSeconds?: number;
  /** Skip the idle check (no stream held open): seconds instead of a minute, idle timeouts unknown. */
  quick?: boolean;
  /** Called while the idle stream is held, every few seconds, with the seconds held so far. */
  idleProgress?: (heldSeconds: number, totalSeconds: number) => void;
  /** Progress lines for humans (stderr in the CLI); never part of the result. */
  log?: (line: string) => void;
}

export interface DoctorReport {
  url: string;
  ok: boolean;
  verdicts: Verdict[];
}

/** How long the idle check holds a quiet stream open by default (longer than the common 60 s proxy timeouts). */
export const DEFAULT_IDLE_SECONDS = 65;
