import type { Deps } from "../../deps";
import { mailOrigin } from "../../http/origin";
import { AppError, ValidationFailed } from "../../http/errors";
import { logEvent } from "../../http/log";
import { iso } from "../../lib/clock";
import { byteLength } from "../../lib/text";
import { domainOf } from "../../mail/mailer";
import { enqueueMail } from "../../mail/queue";
import { deadmanAlert, deadmanRecovered } from "../../mail/templates";
import { isPlausibleEmail, normaliseEmail } from "../accounts/service";
import type { NoteRow } from "../notes/repo";
import type { Tier } from "../../limits/plans";

export const MAX_INTERVAL_SECONDS = 366 * 24 * 3600;
/** An alert quotes at most this many of the stream's last lines, and this many bytes of them. */
const ALERT_LINES = 20;
const ALERT_BYTES = 4096;

/**
 * The dead-man part of a PATCH, inside its write. Setting an interval arms the switch with a
 * deadline stored on the note (now + interval); null turns it off.
 */
export function deadmanChanges(
  deps: Deps,
  tier: Tier,
  note: NoteRow,
  input: { expected_interval_seconds?: number | null; alert_email?: string | null },
): Partial<NoteRow> {
  if (input.expected_interval_seconds === undefined && input.alert_email === undefined) return {};
  if (note.kind !== "stream") {
    throw ValidationFailed.field("note.expected_interval_seconds", "not_a_stream", "the dead-man's switch belongs to streams (append-only notes)");
  }
  const enabling = (input.expected_interval_seconds ?? null) !== null || (input.alert_email ?? null) !== null;
  if (enabling && !tier.deadman) throw new AppError("plan_required", `the dead-man's switch is not available on the ${tier.name} plan`);
  const changes: Partial<NoteRow> = {};
  if (input.alert_email !== undefined) {
    if (input.alert_email === null) changes.alertEmail = null;
    else {
      const email = normaliseEmail(input.alert_email);
      if (!isPlausibleEmail(email)) throw ValidationFailed.field("note.alert_email", "invalid", "alert_email must be an e-mail address");
      changes.alertEmail = email;
    }
  }
  const seconds = input.expected_interval_seconds;
  if (seconds === null) {
    Object.assign(changes, { expectedIntervalSeconds: null, deadmanStatus: "off", deadmanDueAt: null });
  } else if (seconds !== undefined) {
    const min = deps.config.minIntervalSeconds;
    if (!Number.isInteger(seconds) || seconds < min || seconds > MAX_INTERVAL_SECONDS) {
      throw ValidationFailed.field(
        "note.expected_interval_seconds",
        "out_of_range",
        `expected_interval_seconds must be a whole number from ${min} to ${MAX_INTERVAL_SECONDS}`,
      );
    }
    // The clock starts now: a note that was quiet before the switch was set is not late at once.
    Object.assign(changes, { expectedIntervalSeconds: seconds, deadmanStatus: "ok", deadmanDueAt: deps.clock.now() + seconds * 1000 });
  }
  return changes;
}

/** Where a stream's alerts go: its alert_email, or the workspace owner's address. */
export function recipient(deps: Deps, note: { alertEmail: string | null; workspaceId: string }): string {
  if (note.alertEmail) return note.alertEmail;
  const owner = deps.db.$client
    .query<{ email: string }, [string]>("SELECT a.email FROM workspaces w JOIN accounts a ON a.id = w.owner_id WHERE w.id = ?")
    .get(note.workspaceId);
  return owner!.email;
}

/** Inside an append's write, after its checks: a late stream is back, and says so once. */
export function noteResumed(deps: Deps, note: NoteRow, line: string, now: number): void {
  if (note.deadmanStatus !== "late") return;
  deps.db.$client.query("UPDATE notes SET deadman_status = 'ok' WHERE id = ?").run(note.id);
  // The row may sit in the writer's per-batch cache: the next append of the batch must see it.
  note.deadmanStatus = "ok";
  enqueueMail(
    deps,
    deadmanRecovered({ to: recipient(deps, note), noteTitle: note.title, filename: note.filename, resumedAt: iso(now), line: line.trimEnd() }),
  );
}

/**
 * Every armed stream whose deadline has passed becomes late and gets one alert mail, in the same
 * write: the status on the note is what stops a second alert, across restarts too.
 */
export function checkDeadlines(deps: Deps): number {
  const now = deps.clock.now();
  const sqlite = deps.db.$client;
  const due = sqlite
    .query<
      {
        id: string;
        workspaceId: string;
        title: string;
        filename: string | null;
        alertEmail: string | null;
        lastWriteAt: number;
        interval: number;
        fullSince: number | null;
      },
      [number]
    >(
      `SELECT id, workspace_id AS workspaceId, title, filename, alert_email AS alertEmail, last_write_at AS lastWriteAt,
              expected_interval_seconds AS interval, full_since AS fullSince
       FROM notes WHERE deadman_status = 'ok' AND deadman_due_at <= ? AND trashed_at IS NULL`,
    )
    .all(now);
  for (const n of due) {
    sqlite.query("UPDATE notes SET deadman_status = 'late' WHERE id = ? AND deadman_status = 'ok'").run(n.id);
    const to = recipient(deps, n);
    deps.writer.afterCommit(() => {
      deps.metrics.deadmanAlerts.inc();
      logEvent("warn", "dead-man alert sent", {
        note_id: n.id,
        silent_seconds: Math.round((now - n.lastWriteAt) / 1000),
        interval_seconds: n.interval,
        to_domain: domainOf(to),
      });
    });
    enqueueMail(
      deps,
      deadmanAlert({
        to,
        noteTitle: n.title,
        filename: n.filename,
        noteId: n.id,
        lastWriteAt: iso(n.lastWriteAt),
        silentForMs: now - n.lastWriteAt,
        intervalSeconds: n.interval,
        lastLines: lastLines(deps, n.id),
        baseUrl: mailOrigin(deps),
        // A full stream is not silent: its writers are being refused, which is another fix.
        fullSince: n.fullSince === null ? null : iso(n.fullSince),
      }),
    );
  }
  return due.length;
}


/**
 * The last lines of a stream for an alert: at most 20, and 4 KB of them. Only the ends of the
 * newest chunks are read (a chunk may be a whole batch of lines, or one 3 MB line), so the cost
 * does not depend on how much the stream holds.
 */
export function lastLines(deps: Deps, noteId: string): string[] {
  const chunks = deps.db.$client
    .query<{ tail: string; cut: number }, [string]>(
      `SELECT substr(text, -${ALERT_BYTES + 1}) AS tail, length(text) > ${ALERT_BYTES + 1} AS cut FROM note_chunks WHERE note_id = ? ORDER BY seq DESC`,
    )
    .iterate(noteId);
  let text = "";
  let whole = true;
  for (const c of chunks) {
    text = c.tail + text;
    if (c.cut || text.length > ALERT_BYTES || newlines(text) > ALERT_LINES) {
      whole = false;
      break;
    }
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
