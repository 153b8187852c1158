// `sluice call URL TOOL [--arg k=v …] [--args JSON] [--header 'K: V' …] [--token T] [--timeout MS] [--json]`
//
// Initializes, calls one tool with a progress token and renders its progress: a live bar with rate and ETA when
// stderr is a TTY, plain lines (at most one per second) otherwise; partial output (docs/partial-results.md) goes to
// stdout as it arrives. With --json, NDJSON on stdout (one line per progress event or delta, then one for the
// result). Ctrl-C sends notifications/cancelled and exits 130.
//
// Exit codes: 0 ok · 1 the tool returned isError · 2 usage · 3 transport or protocol failure · 130 interrupted.
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { callToolStream } from '../client/call-tool-stream.js';
import { TaskUnreachableError } from '../client/task-state.js';
import { readCommandLine } from './command-line.js';
import { type Connection, connectClient, parseHeaders, UsageError } from './connect.js';
import { endpointUrl, failureHint } from './hints.js';
import { CALL_COMMAND } from './spec/call.js';
import { callAsTask } from './task.js';
import { coerceArgs, listAllTools, requireArgs } from './tool-args.js';
import { oneLine, usageFailure } from './usage-error.js';

interface Renderer {
  progress(p: Progress): void;
  done(): void;
}

function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '?';
  if (seconds < 60) return `${Math.ceil(seconds)}s`;
  const m = Math.floor(seconds / 60);
  return `${m}m${String(Math.ceil(seconds - m * 60)).padStart(2, '0')}s`;
}

/** Live bar on a TTY: `[#####.....]  50%  500/1000  123.4/s  ETA 4s  message`, redrawn at most every 50 ms. */
function ttyRenderer(out: NodeJS.WriteStream): Renderer {
  const start = Date.now();
  let first: { at: number; progress: number } | undefined;
  let lastDraw = 0;
  let last: Progress | undefined;
  const draw = (p: Progress): void => {
    const now = Date.now();
    first ??= { at: now, progress: p.progress };
    const elapsed = (now - first.at) / 1000;
    const rate = elapsed > 0 ? (p.progress - first.progress) / elapsed : 0;
    const width = 24;
    let line: string;
    if (p.total !== undefined && p.total > 0) {
      const ratio = Math.min(1, Math.max(0, p.progress / p.total));
      const filled = Math.round(ratio * width);
      const eta = rate > 0 ? formatDuration((p.total - p.progress) / rate) : '?';
      line = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(ratio * 100).toFixed(0).padStart(3)}%  ${p.progress}/${p.total}  ${rate.toFixed(1)}/s  ETA ${eta}`;
    } else {
      line = `${p.progress}  ${rate.toFixed(1)}/s  ${formatDuration((now - start) / 1000)} elapsed`;
    }
    if (p.message !== undefined) line += `  ${p.message}`;
    const columns = out.columns ?? 100;
    out.write(`\r\x1b[2K${line.slice(0, Math.max(10, columns - 1))}`);
  };
  return {
    progress(p) {
      last = p;
      const now = Date.now();
      if (now - lastDraw >= 50) {
        lastDraw = now;
        draw(p);
      }
    },
    done() {
      if (last !== undefined) {
        draw(last);
        out.write('\n');
      }
    },
  };
}

/**
 * Plain progress lines, at most one per second (the first at once), plus the last one at the end if
 * it was held back: a pipe or log file must not get one line per event.
 */
function lineRenderer(out: NodeJS.WritableStream, now: () => number = Date.now): Renderer {
  let lastLine = Number.NEGATIVE_INFINITY;
  let pending: Progress | undefined;
  const line = (p: Progress): void => {
    const total = p.total !== undefined ? `/${p.total}` : '';
    const pct =
      p.total !== undefined && p.total > 0 ? ` (${((p.progress / p.total) * 100).toFixed(0)}%)` : '';
    out.write(`progress ${p.progress}${total}${pct}${p.message !== undefined ? ` ${p.message}` : ''}\n`);
  };
  return {
    progress(p) {
      const t = now();
      if (t - lastLine < 1000) {
        pending = p;
        return;
      }
      lastLine = t;
      pending = undefined;
      line(p);
    },
    done() {
      if (pending !== undefined) line(pending);
      pending = undefined;
    },
  };
}

function jsonRenderer(start: number): Renderer {
  return {
    progress(p) {
      process.stdout.write(`${JSON.stringify({ type: 'progress', elapsedMs: Date.now() - start, ...p })}\n`);
    },
    done() {},
  };
}

/** The result's text content joined, and whether it holds anything else (blocks, structured content). */
function textOfResult(result: CallToolResult): { text: string; other: boolean } {
  let text = '';
  let other = result.structuredContent !== undefined;
  for (const c of (result.content ?? []) as { type?: unknown; text?: unknown }[]) {
    if (c.type === 'text' && typeof c.text === 'string') text += c.text;
    else other = true;
  }
  return { text, other };
}

/** Renders a tool result's content for humans: text as is, anything else as one JSON line. */
export function renderContent(content: unknown): string {
  if (!Array.isArray(content)) return `${JSON.stringify(content)}\n`;
  let out = '';
  for (const item of content as { type?: unknown; text?: unknown }[]) {
    out +=
      item.type === 'text' && typeof item.text === 'string' ? `${item.text}\n` : `${JSON.stringify(item)}\n`;
  }
  return out;
}

/** `--args` as a JSON object, or a usage error that names `--args`. */
function parseArgsJson(text: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--args is not valid JSON (${oneLine(error)}): ${text.slice(0, 80)}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new UsageError(`--args must be a JSON object like '{"text":"hi"}', got ${text.slice(0, 80)}`);
  }
  return parsed as Record<string, unknown>;
}

/** Says the CLI does not provide what the tool asked the client for, unless the failure says so already. */
function unprovidedHint(connection: Connection | undefined, failure: unknown): string {
  const asked = connection?.unprovided() ?? [];
  if (asked.length === 0 || oneLine(failure).includes('the sluice CLI does not provide')) return '';
  return ` (the tool asked the client for ${asked.join(' and ')}, which the sluice CLI does not provide)`;
}

/**
 * What to say of a word after TOOL: arguments travel only as --arg or --args, and the word's shape
 * says which one its writer meant (other MCP CLIs take `k=v` or a JSON object there).
 */
function strayArgument(word: string): string {
  const whole = word.length <= 40;
  const head = `unexpected '${whole ? word : `${word.slice(0, 40)}…`}' after TOOL`;
  if (word.trimStart().startsWith('{'))
    return `${head}: pass a JSON object of arguments as --args ${whole ? `'${word}'` : 'JSON'}`;
  if (/^[^=\s]+=/.test(word)) return `${head}: pass each argument as --arg ${whole ? word : 'k=v'}`;
  return `${head}: sluice call takes one tool; pass its arguments as --arg k=v or --args JSON`;
}

export async function main(argv: string[]): Promise<number> {
  const line = readCommandLine(CALL_COMMAND, argv);
  if (typeof line === 'number') return line;
  const { values, positionals } = line;
  const [url, tool] = positionals;
  if (url === undefined || tool === undefined) {
    return usageFailure('call', 'expected URL and TOOL', CALL_COMMAND.usageLine);
  }
  const extra = positionals[2];
  if (extra !== undefined) return usageFailure('call', strayArgument(extra), CALL_COMMAND.usageLine);
  let args: Record<string, unknown>;
  const pairs: [string, string][] = [];
  let headers: Record<string, string>;
  let timeout: number;
  let endpoint: URL;
  try {
    endpoint = endpointUrl(url);
    const base = values.args !== undefined ? parseArgsJson(values.args) : {};
    args = { ...base };
    for (const kv of values.arg ?? []) {
      const eq = kv.indexOf('=');
      if (eq <= 0) throw new UsageError(`--arg expects k=v, got '${kv}'`);
      pairs.push([kv.slice(0, eq), kv.slice(eq + 1)]);
    }
    headers = parseHeaders(values.header ?? []);
    timeout = values.timeout !== undefined ? Number(values.timeout) : 60_000;
    if (!Number.isFinite(timeout) || timeout <= 0)
      throw new UsageError('--timeout must be a positive number of ms');
  } catch (error) {
    return usageFailure('call', oneLine(error), CALL_COMMAND.usageLine);
  }

  const json = values.json === true;
  const start = Date.now();
  const renderer = json
    ? jsonRenderer(start)
    : process.stderr.isTTY
      ? ttyRenderer(process.stderr)
      : lineRenderer(process.stderr);
  const abort = new AbortController();
  let interrupted = false;
  const onSigint = (): void => {
    interrupted = true;
    // The SDK Protocol sends notifications/cancelled for the request and rejects it.
    abort.abort('interrupted (Ctrl-C)');
  };
  process.once('SIGINT', onSigint);
  let connection: Connection | undefined;
  let hint = '';
  try {
    connection = await connectClient(endpoint.href, headers, values);
    // The tool list gives the schema --arg values are coerced by; a server that cannot list is still called.
    const listed = await listAllTools(connection.client).catch(() => undefined);
    const known = listed?.find((t) => t.name === tool);
    Object.assign(args, coerceArgs(pairs, known));
    requireArgs(args, known);
    if (listed !== undefined && known === undefined)
      hint = ` (the server lists no tool '${tool}'; 'sluice tools ${url}' lists the ${listed.length} it has)`;
    let result: CallToolResult | undefined;
    let streamed = '';
    /** A delta of partial output: on stdout as it arrives (a {"type":"partial"} line with --json). */
    const partial = (text: string) => {
      streamed += text;
      if (json) process.stdout.write(`${JSON.stringify({ type: 'partial', text })}\n`);
      else if (text.length > 0) process.stdout.write(text);
    };
    if (values.task === true)
      result = await callAsTask(connection, tool, args, json, abort.signal, Math.ceil(timeout), partial);
    else
      for await (const part of callToolStream(
        connection.client,
        { name: tool, arguments: args },
        { resetTimeoutOnProgress: true, timeout, signal: abort.signal },
      )) {
        if (part.type === 'progress') renderer.progress(part.progress);
        else if (part.type === 'partial') {
          partial(part.text);
          if (!json && part.content !== undefined) process.stdout.write(renderContent(part.content));
        } else result = part.result;
      }
    renderer.done();
    if (result === undefined) throw new Error('the call ended without a result');
    if (json) {
      process.stdout.write(
        `${JSON.stringify({ type: 'result', elapsedMs: Date.now() - start, ...result })}\n`,
      );
    } else if (result.isError !== true) {
      // A failed tool's text goes to stderr only (below), not to both streams.
      const { text, other } = textOfResult(result);
      if (streamed.length > 0 && !streamed.endsWith('\n')) process.stdout.write('\n');
      // The streamed text already is the answer: print the result only when it adds something.
      if (streamed.length === 0 || text !== streamed || other) {
        process.stdout.write(renderContent(result.content));
        if (
          result.structuredContent !== undefined &&
          (result.content as unknown[] | undefined)?.length === 0
        ) {
          process.stdout.write(`${JSON.stringify(result.structuredContent)}\n`);
        }
      }
    }
    if (result.isError === true) {
      const first = (result.content as { type?: unknown; text?: unknown }[] | undefined)?.[0];
      const reason = first?.type === 'text' && typeof first.text === 'string' ? first.text : 'isError: true';
      if (!json) {
        process.stderr.write(
          `sluice call: tool '${tool}' failed: ${oneLine(reason)}${hint}${unprovidedHint(connection, reason)}\n`,
        );
      }
      return 1;
    }
    return 0;
  } catch (error) {
    renderer.done();
    if (interrupted) {
      await connection?.settle();
      process.stderr.write('sluice call: interrupted; sent notifications/cancelled\n');
      return 130;
    }
    if (error instanceof UsageError) return usageFailure('call', oneLine(error), CALL_COMMAND.usageLine);
    const later =
      error instanceof TaskUnreachableError ? `; read it later: sluice task get ${error.taskId} ${url}` : '';
    const message = `${oneLine(error)}${later}${hint}${failureHint(error, endpoint)}${unprovidedHint(connection, error)}`;
    if (json) process.stdout.write(`${JSON.stringify({ type: 'error', message })}\n`);
    else process.stderr.write(`sluice call: ${message}\n`);
    return 3;
  } finally {
    process.removeListener('SIGINT', onSigint);
    await connection?.client.close().catch(() => {});
  }
}
