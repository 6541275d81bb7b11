/**
 * Request log lines, written to stdout in one write per turn of the event loop instead of one
 * per request: under load that is the difference between thousands of syscalls and a few.
 */
let pending: string[] = [];
let scheduled = false;

/** Queues one log line: a complete JSON object on one line. */
export function logLine(line: string): void {
  pending.push(line);
  if (!scheduled) {
    scheduled = true;
    setImmediate(flushLog);
  }
}

export function flushLog(): void {
  scheduled = false;
  if (pending.length === 0) return;
  const text = pending.join("\n") + "\n";
  pending = [];
  process.stdout.write(text);
}
