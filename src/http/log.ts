import { iso } from "../lib/clock";
import { randomBase62 } from "../lib/random";
import { jsonString } from "../lib/text";

/**
 * Request log lines, gathered and written to stdout every few milliseconds instead of one write
 * per request (or per turn of the event loop): a write to a file or a pipe costs a system call
 * whatever its size, and one write per turn was a visible share of the event loop under load. A
 * line appears at most FLUSH_MS late; the shutdown path and every other log message flush first,
 * so the order of lines is kept.
 */
const FLUSH_MS = 10;
/** Lines after which the buffer is written at once, so a burst never holds much in memory. */
const FLUSH_LINES = 1000;

let pending: string[] = [];
let timer: ReturnType<typeof setTimeout> | null = null;

/** Queues one log line: a complete JSON object on one line. */
export function logLine(line: string): void {
  pending.push(line);
  if (pending.length >= FLUSH_LINES) flushLog();
  else if (timer === null) timer = setTimeout(flushLog, FLUSH_MS);
}

export function flushLog(): void {
  if (timer !== null) {
    clearTimeout(timer);
    timer = null;
  }
  if (pending.length === 0) return;
  const text = pending.join("\n") + "\n";
  pending = [];
  process.stdout.write(text);
}

// Lines still gathered when the process ends on its own are written too.
process.on("exit", flushLog);

// Request ids: a random prefix per process and a counter, unique without a random draw per
// request. The counter starts at 36^7, so it has eight base-36 digits without padding (for
// the first 2.8 trillion requests).
const ID_PREFIX = `req_${randomBase62(8)}`;
let idCounter = 36 ** 7;

/** The request's id: the caller's X-Request-Id when it is a sane token, else a new one. */
export function requestId(request: Request): string {
  const incoming = request.headers.get("x-request-id");
  return incoming && /^[\w.-]{1,64}$/.test(incoming) ? incoming : ID_PREFIX + (++idCounter).toString(36);
}

/**
 * One line per request. Built as a string: the fields are known, and only the method and path
 * need escaping. Inbox URLs carry their credential in the path: it never reaches the log.
 */
export function logRequest(method: string, path: string, status: number, started: number, id: string, ip: string): void {
  const ms = Math.round((performance.now() - started) * 100) / 100;
  const shown = path.startsWith("/h/") ? "/h/[redacted]" : path;
  logLine(
    `{"time":"${iso(Date.now())}","level":"info","msg":"request","method":${methodJson(method)},"path":${jsonString(shown)},"status":${status},"duration_ms":${ms},"request_id":"${id}","ip":${jsonString(ip)}}`,
  );
}

/**
 * One line for a background event an operator looks for (a delivery retried, a dead letter, an
 * alert sent), in the request lines' format and order: `{"time","level","msg",...fields}`.
 * Callers pass only what is safe to keep in a log: ids, counts, hosts, domains; never a token,
 * a secret URL, an address's local part or a body.
 */
export function logEvent(level: "info" | "warn" | "error", msg: string, fields: Record<string, string | number | boolean | null> = {}): void {
  logLine(JSON.stringify({ time: iso(Date.now()), level, msg, ...fields }));
}

const METHOD_JSON = new Map(["GET", "POST", "PATCH", "PUT", "DELETE", "HEAD", "OPTIONS"].map((m) => [m, `"${m}"`]));

/** The method as a JSON string for the log: the usual ones are known. */
function methodJson(method: string): string {
  return METHOD_JSON.get(method) ?? jsonString(method);
}
