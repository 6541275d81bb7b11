import { and, eq, isNotNull, isNull, lte, sql } from "drizzle-orm";
import type { Deps } from "../../deps";
import { accounts, notes, workspaces } from "../../db/tables";
import { sqlRows } from "../../db/sql";
import { mailOrigin } from "../../http/origin";
import { AppError, ValidationFailed } from "../../http/errors";
import { logEvent } from "../../http/log";
import { iso } from "../../lib/clock";
import { byteLength } from "../../lib/text";
import { domainOf } from "../../mail/mailer";
import { enqueueMail } from "../../mail/queue";
import { deadmanAlert, deadmanRecovered, runOverdue, signalFailed } from "../../mail/templates";
import type { Signal } from "../streams/append/model";
import type { AppendHook } from "../streams/append/hooks";
import { enqueueAlertDelivery } from "../webhooks/delivery";
import { isPlausibleEmail, normaliseEmail } from "../accounts/service";
import { scheduleOf } from "./schedule";
import { watchChanges, type DeadmanInput } from "./watch";
import type { NoteRow } from "../notes/repo";
import type { Tier } from "../../limits/plans";

export { MAX_INTERVAL_SECONDS } from "./watch";
export const MAX_RUN_SECONDS = 7 * 24 * 3600;
/** An alert quotes at most this many of the stream's last lines, and this many bytes of them. */
const ALERT_LINES = 20;
const ALERT_BYTES = 4096;

/**
 * The dead-man part of a PATCH, inside its write. Setting an interval arms the switch with a
 * deadline stored on the note (now + interval); null turns it off. Setting a schedule arms it
 * with the first scheduled time after the last write, plus the grace (a stream never written to
 * waits for its first write, as a new check does in healthchecks); a stream has an interval or a
 * schedule, never both: setting one clears the other, and one PATCH setting both is refused.
 */
export function deadmanChanges(
  deps: Deps,
  tier: Tier,
  note: NoteRow,
  input: DeadmanInput,
): Partial<NoteRow> {
  const fields = ["expected_interval_seconds", "schedule", "timezone", "grace_seconds", "alert_email", "max_run_seconds", "alert_webhook"] as const;
  const given = fields.find((f) => input[f] !== undefined);
  if (given === undefined) return {};
  if (note.kind !== "stream") {
    throw ValidationFailed.field(`note.${given}`, "not_a_stream", "the dead-man's switch belongs to streams (append-only notes)");
  }
  const enabling =
    (input.expected_interval_seconds ?? null) !== null || (input.schedule ?? null) !== null || (input.alert_email ?? null) !== null || (input.max_run_seconds ?? null) !== null || input.alert_webhook === true;
  if (enabling && !tier.deadman) throw new AppError("plan_required", `the dead-man's switch is not available on the ${tier.name} plan`);
  const changes: Partial<NoteRow> = {};
  if (input.alert_webhook !== undefined) changes.alertWebhook = input.alert_webhook;
  const run = input.max_run_seconds;
  if (run !== undefined) {
    if (run !== null && (!Number.isInteger(run) || run < 1 || run > MAX_RUN_SECONDS)) {
      throw ValidationFailed.field("note.max_run_seconds", "out_of_range", `max_run_seconds must be a whole number from 1 to ${MAX_RUN_SECONDS}`);
    }
    changes.maxRunSeconds = run;
  }
  if (input.alert_email !== undefined) {
    if (input.alert_email === null) changes.alertEmail = null;
    else {
      const email = normaliseEmail(input.alert_email);
      if (!isPlausibleEmail(email)) throw ValidationFailed.field("note.alert_email", "invalid", "alert_email must be an e-mail address");
      changes.alertEmail = email;
    }
  }
  return Object.assign(changes, watchChanges(deps, note, input));
}

/** Where a stream's alerts go: its alert_email, or the workspace owner's address. */
export async function recipient(deps: Deps, note: { alertEmail: string | null; workspaceId: string }): Promise<string> {
  if (note.alertEmail) return note.alertEmail;
  const [owner] = await deps.db
    .select({ email: accounts.email })
    .from(workspaces)
    .innerJoin(accounts, eq(accounts.id, workspaces.ownerId))
    .where(eq(workspaces.id, note.workspaceId));
  return owner!.email;
}

/**
 * What each append says about its job. Any append brings a late stream back (a recovery mail,
 * once); `start` marks a run under way; `ok` ends it and brings a failing stream back too; `fail`
 * ends it and, unless the stream is failing already, alerts at once. The status is kept on every
 * plan; alerts go out on plans with the switch.
 */
export const deadmanOnAppend: AppendHook = {
  appended(deps, { note, tier, signal, line, at }) {
    // Nothing to say for a plain line to a stream that is not late: no pause (modules/streams/append/maybe-promise.ts).
    if (signal === undefined && note.deadmanStatus !== "late") return undefined;
    return signalled(deps, note, tier, signal, line, at);
  },
};

async function signalled(deps: Deps, note: NoteRow, tier: Tier, signal: Signal | undefined, line: string, now: number): Promise<void> {
  const before = note.deadmanStatus;
  const changes: Partial<NoteRow> = {};
  if (signal === "start") changes.runStartedAt = now;
  if (signal === "ok" || signal === "fail") {
    if (note.runStartedAt !== null) changes.lastRunMs = now - note.runStartedAt;
    changes.runStartedAt = null;
  }
  const armed = note.expectedIntervalSeconds !== null || note.schedule !== null ? "ok" : "off";
  if (signal === "fail") changes.deadmanStatus = "failing";
  else if (before === "late" || (signal === "ok" && before === "failing")) changes.deadmanStatus = armed;
  const after = changes.deadmanStatus ?? before;
  if (Object.keys(changes).length > 0) {
    await deps.db.update(notes).set(changes).where(eq(notes.id, note.id));
    // The row may sit in the writer's per-batch cache: the next append of the batch must see it.
    Object.assign(note, changes);
  }
  if (!tier.deadman || after === before) return;
  const text = line.trimEnd();
  const name = note.filename ?? note.title;
  if (after === "failing") {
    await enqueueMail(deps, signalFailed({ to: await recipient(deps, note), noteTitle: note.title, filename: note.filename, noteId: note.id, at: iso(now), line: text, lastLines: await lastLines(deps, note.id), baseUrl: mailOrigin(deps) }));
    await enqueueAlertDelivery(deps, note, `FAILED: ${name} reported a failure: ${text}`, now);
  } else if (before === "late" || before === "failing") {
    await enqueueMail(deps, deadmanRecovered({ to: await recipient(deps, note), noteTitle: note.title, filename: note.filename, resumedAt: iso(now), line: text }));
    await enqueueAlertDelivery(deps, note, `RECOVERED: ${name} ${before === "failing" ? "reported ok" : "is writing again"}: ${text}`, now);
  }
}

/**
 * Every armed stream whose deadline has passed becomes late and gets one alert mail, in the same
 * write: the status on the note is what stops a second alert, across restarts too.
 */
export async function checkDeadlines(deps: Deps): Promise<number> {
  const now = deps.clock.now();
  const due = await deps.db
    .select({
      id: notes.id,
      workspaceId: notes.workspaceId,
      title: notes.title,
      filename: notes.filename,
      alertEmail: notes.alertEmail,
      lastWriteAt: notes.lastWriteAt,
      interval: notes.expectedIntervalSeconds,
      schedule: notes.schedule,
      timezone: notes.timezone,
      graceSeconds: notes.graceSeconds,
      fullSince: notes.fullSince,
      webhookUrl: notes.webhookUrl,
      webhookStatus: notes.webhookStatus,
      alertWebhook: notes.alertWebhook,
      byteSize: notes.byteSize,
    })
    .from(notes)
    .where(and(eq(notes.deadmanStatus, "ok"), lte(notes.deadmanDueAt, now), isNull(notes.trashedAt)));
  for (const n of due) {
    await deps.db
      .update(notes)
      .set({ deadmanStatus: "late" })
      .where(and(eq(notes.id, n.id), eq(notes.deadmanStatus, "ok")));
    const to = await recipient(deps, n);
    deps.writer.afterCommit(() => {
      deps.metrics.deadmanAlerts.inc();
      logEvent("warn", "dead-man alert sent", {
        note_id: n.id,
        silent_seconds: Math.round((now - n.lastWriteAt) / 1000),
        interval_seconds: n.interval,
        to_domain: domainOf(to),
      });
    });
    await enqueueMail(
      deps,
      deadmanAlert({
        to,
        noteTitle: n.title,
        filename: n.filename,
        noteId: n.id,
        lastWriteAt: iso(n.lastWriteAt),
        silentForMs: now - n.lastWriteAt,
        intervalSeconds: n.interval,
        schedule: scheduleOf(n),
        lastLines: await lastLines(deps, n.id),
        baseUrl: mailOrigin(deps),
        // A full stream is not silent: its writers are being refused, which is another fix.
        fullSince: n.fullSince === null ? null : iso(n.fullSince),
      }),
    );
    const name = n.filename ?? n.title;
    await enqueueAlertDelivery(
      deps,
      { id: n.id, webhookUrl: n.webhookUrl, webhookStatus: n.webhookStatus, alertWebhook: n.alertWebhook, byteSize: n.byteSize },
      n.fullSince === null ? `LATE: no write to ${name} for ${Math.round((now - n.lastWriteAt) / 1000)}s (${n.schedule === null ? `expected every ${n.interval}s` : `scheduled "${n.schedule}" ${n.timezone}`})` : `FULL: ${name} is full and refusing writes`,
      now,
    );
  }
  return due.length + (await checkRuns(deps, now));
}

/**
 * Every run that started (status start) and has not reported within its stream's
 * max_run_seconds: the stream becomes late and alerts once, like a missed deadline; the run is
 * forgotten, so the next start begins a new one.
 */
async function checkRuns(deps: Deps, now: number): Promise<number> {
  const overdue = await deps.db
    .select()
    .from(notes)
    .where(and(isNotNull(notes.runStartedAt), isNotNull(notes.maxRunSeconds), isNull(notes.trashedAt), sql`${notes.runStartedAt} + ${notes.maxRunSeconds} * 1000 <= ${now}`));
  for (const n of overdue) {
    const wasAlerting = n.deadmanStatus === "late" || n.deadmanStatus === "failing";
    await deps.db
      .update(notes)
      .set({ runStartedAt: null, ...(wasAlerting ? {} : { deadmanStatus: "late" as const }) })
      .where(eq(notes.id, n.id));
    if (wasAlerting) continue;
    const name = n.filename ?? n.title;
    await enqueueMail(
      deps,
      runOverdue({ to: await recipient(deps, n), noteTitle: n.title, filename: n.filename, noteId: n.id, startedAt: iso(n.runStartedAt!), maxRunSeconds: n.maxRunSeconds!, lastLines: await lastLines(deps, n.id), baseUrl: mailOrigin(deps) }),
    );
    await enqueueAlertDelivery(deps, n, `LATE: a run of ${name} started ${Math.round((now - n.runStartedAt!) / 1000)}s ago and has not reported (max ${n.maxRunSeconds}s)`, now);
  }
  return overdue.length;
}


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
