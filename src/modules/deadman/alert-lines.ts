import { sql } from "drizzle-orm";
import type { Deps } from "../../deps";
import { sqlRows } from "../../db/sql";
import { byteLength } from "../../lib/text";

/** An alert quotes at most this many of the stream's last lines, and this many bytes of them. */
const ALERT_LINES = 20;
const ALERT_BYTES = 4096;

/**
 * The last lines of a stream for an alert: at most 20, and 4 KB of them. Only the ends of the
 * newest chunks are read (a chunk may be a whole batch of lines, or one 3 MB line), so the cost
 * does not depend on how much the stream holds (read a few chunks at a time, newest first).
 */
export async function lastLines(deps: Deps, noteId: string): Promise<string[]> {
  const keep = ALERT_BYTES + 1;
  let text = "";
  let whole = true;
  let before: number | null = null;
  read: for (;;) {
    const page: { seq: number | string; tail: string; cut: number | boolean }[] = await sqlRows(
      deps.store,
      sql`SELECT seq, CASE WHEN length(text) > ${keep} THEN substr(text, length(text) - ${keep - 1}) ELSE text END AS tail,
            CASE WHEN length(text) > ${keep} THEN 1 ELSE 0 END AS cut
          FROM note_chunks WHERE note_id = ${noteId}${before === null ? sql`` : sql` AND seq < ${before}`} ORDER BY seq DESC LIMIT 8`,
    );
    for (const c of page) {
      before = Number(c.seq);
      text = c.tail + text;
      if (Number(c.cut) === 1 || text.length > ALERT_BYTES || newlines(text) > ALERT_LINES) {
        whole = false;
        break read;
      }
    }
    if (page.length < 8) break;
  }
  const lines = text.split("\n");
  lines.pop();
  // Read from a chunk's middle, the first line may be the end of a longer one.
  if (!whole && lines.length > 1) lines.shift();
  const kept: string[] = [];
  let size = 0;
  for (let i = lines.length - 1; i >= 0 && kept.length < ALERT_LINES; i--) {
    const line = lines[i]!;
    if (line === "") continue;
    const bytes = byteLength(line) + 1;
    if (size + bytes > ALERT_BYTES) {
      if (kept.length === 0) kept.push(`…${lastBytes(line, ALERT_BYTES - 4)}`);
      break;
    }
    kept.push(line);
    size += bytes;
  }
  return kept.reverse();
}

function newlines(s: string): number {
  let n = 0;
  for (let i = s.indexOf("\n"); i !== -1; i = s.indexOf("\n", i + 1)) n++;
  return n;
}

/** The end of a line, at most `max` UTF-8 bytes, without a broken character at its start. */
function lastBytes(line: string, max: number): string {
  const buf = Buffer.from(line.slice(-max));
  return buf.subarray(Math.max(0, buf.length - max)).toString("utf8").replace(/^\uFFFD+/, "");
}
