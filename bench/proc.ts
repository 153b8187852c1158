// Readers for Linux /proc: a process's CPU time and RSS, the kernel's TCP queues for a port,
// a process's connections to a port, and CPU pressure. The parent reads these for its children without asking them, so a child
// that is busy in a tight loop is still measured. CPU from /proc has CLK_TCK resolution
// (10 ms); the children also report process.cpuUsage() in µs over IPC (see servers/launch.ts),
// which the per-operation figures use.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** Clock ticks per second for /proc/PID/stat (`getconf CLK_TCK`; 100 on Linux x86-64). */
export const CLK_TCK = 100;

/** utime + stime of `pid` in µs, from /proc/PID/stat (fields 14 and 15). */
export function readCpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) is in parentheses and may contain spaces; count after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1_000_000) / CLK_TCK;
}

/** Resident set size of `pid` in bytes, from VmRSS in /proc/PID/status. */
export function readRssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  return m?.[1] === undefined ? Number.NaN : Number(m[1]) * 1024;
}

/**
 * Bytes queued in the kernel for TCP sockets that have `port` at either end, from
 * /proc/net/tcp: send queues (tx) plus receive queues (rx). For a paused client this is the
 * server's unsent data plus the client's unread data.
 */
export function readTcpQueuedBytes(port: number): number {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  let total = 0;
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue; // tcp6 is absent when IPv6 is disabled; 127.0.0.1 traffic is in /proc/net/tcp.
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      const local = cols[1];
      const remote = cols[2];
      const queues = cols[4];
      if (local === undefined || remote === undefined || queues === undefined) continue;
      if (!local.endsWith(`:${hexPort}`) && !remote.endsWith(`:${hexPort}`)) continue;
      const [tx, rx] = queues.split(':');
      total += Number.parseInt(tx ?? '0', 16) + Number.parseInt(rx ?? '0', 16);
    }
  }
  return total;
}

/** The `some` line of /proc/pressure/cpu (e.g. `some avg10=6.00 …`), or undefined without PSI. */
export function readCpuPressure(): string | undefined {
  try {
    return readFileSync('/proc/pressure/cpu', 'utf8').split('\n')[0];
  } catch {
    return undefined; // Kernels without PSI have no such file; the report says "n/a".
  }
}

/** Open TCP sockets of `pid` whose remote port is `port` (Linux: /proc/PID/fd against /proc/net/tcp*). */
export function socketsTo(pid: number, port: number): number {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m?.[1] !== undefined) inodes.add(m[1]);
    } catch {
      // The fd closed while we looked.
    }
  }
  const hex = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  let n = 0;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // f[2] remote address, f[3] state (01 = ESTABLISHED), f[9] inode.
      if (f[2]?.endsWith(hex) === true && f[3] === '01' && f[9] !== undefined && inodes.has(f[9])) n++;
    }
  }
  return n;
}
