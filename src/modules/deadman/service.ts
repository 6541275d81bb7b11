import { and, eq, isNotNull, isNull, lte, sql } from "drizzle-orm";
import type { Deps } from "../../deps";
import { accounts, notes, workspaces } from "../../db/tables";
import { mailOrigin } from "../../http/origin";
import { AppError, ValidationFailed } from "../../http/errors";
import { logEvent } from "../../http/log";
import { iso } from "../../lib/clock";
import { domainOf } from "../../mail/mailer";
import { enqueueMail } from "../../mail/queue";
import { deadmanAlert, deadmanRecovered, runOverdue, signalFailed } from "../../mail/templates";
import type { Signal } from "../streams/append/model";
import type { AppendHook } from "../streams/append/hooks";
import { raiseAlert } from "../channels/alerts";
import { isPlausibleEmail, normaliseEmail } from "../accounts/service";
import { scheduleOf } from "./schedule";
import { recipient } from "./recipient";
import { lastLines } from "./alert-lines";
import { heldUntil, quietChanges, type QuietInput } from "./quiet";
import { mintAckUrl } from "./ack-links";
import { alerting, armFollowUps, followUpChanges, sendFollowUps, spellChanges, type FollowUpInput } from "./spell";
import { fullNotice } from "../streams/retention";
import { watchChanges, type DeadmanInput } from "./watch";
import type { NoteRow } from "../notes/repo";
import type { Tier } from "../../limits/plans";

export { MAX_INTERVAL_SECONDS } from "./watch";
export const MAX_RUN_SECONDS = 7 * 24 * 3600;

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
  input: DeadmanInput & QuietInput & FollowUpInput,
): Partial<NoteRow> {
  const changes = { ...quietChanges(deps, note, input), ...followUpChanges(deps, note, input) };
  Object.assign(changes, watchedChanges(deps, tier, note, input));
  // Re-arming or turning off the switch ends a spell: its follow-ups and acknowledgement go with it.
  if (changes.deadmanStatus !== undefined) Object.assign(changes, spellChanges(note.deadmanStatus, changes.deadmanStatus, deps.clock.now()));
  return changes;
}

function watchedChanges(deps: Deps, tier: Tier, note: NoteRow, input: DeadmanInput): Partial<NoteRow> {
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

/**
 * What each append says about its job. Any append brings a late stream back (a recovery mail,
 * once); `start` marks a run under way; `ok` ends it and brings a failing stream back too; `fail`
 * ends it and, unless the stream is failing already, alerts at once. The status is kept on every
 * plan; alerts go out on plans with the switch. Any write resumes a paused stream (its deadline
 * was moved by the write, as for any armed stream). Inside quiet time or a maintenance window a
 * failure's alert is held back (alert_owed_at); a spell whose alert was never sent ends without a
 * recovery notice.
 */
export const deadmanOnAppend: AppendHook = {
  appended(deps, { note, tier, signal, line, at }) {
    // Nothing to say for a plain line to a stream that is not late: no pause (modules/streams/append/maybe-promise.ts).
    if (signal === undefined && note.deadmanStatus !== "late" && note.deadmanStatus !== "paused") return undefined;
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
  else if (before === "late" || before === "paused" || (signal === "ok" && before === "failing")) changes.deadmanStatus = armed;
  const after = changes.deadmanStatus ?? before;
  Object.assign(changes, spellChanges(before, after, now));
  const owed = note.alertOwedAt !== null;
  const held = after === "failing" && after !== before ? heldUntil(note, now) : null;
  if (held !== null) changes.alertOwedAt = held;
  else if (owed && after !== before) changes.alertOwedAt = null;
  if (Object.keys(changes).length > 0) {
    await deps.db.update(notes).set(changes).where(eq(notes.id, note.id));
    // The row may sit in the writer's per-batch cache: the next append of the batch must see it.
    Object.assign(note, changes);
  }
  if (!tier.deadman || after === before || held !== null) return;
  const text = line.trimEnd();
  const name = note.filename ?? note.title;
  if (after === "failing") {
    await failedAlert(deps, note, now, text);
  } else if ((before === "late" || before === "failing") && !owed) {
    await enqueueMail(deps, deadmanRecovered({ to: await recipient(deps, note), noteTitle: note.title, filename: note.filename, resumedAt: iso(now), line: text }));
    const title = `${name} ${before === "failing" ? "reported ok" : "is writing again"}`;
    await raiseAlert(deps, note, { kind: "recovered", title, text: `RECOVERED: ${title}: ${text}` }, now);
  }
}

/**
 * Every armed stream whose deadline has passed becomes late and gets one alert mail, in the same
 * write: the status on the note is what stops a second alert, across restarts too. Inside quiet
 * time or a maintenance window it becomes late silently, its alert owed from when they end.
 */
export async function checkDeadlines(deps: Deps): Promise<number> {
  const now = deps.clock.now();
  const due = await deps.db
    .select()
    .from(notes)
    .where(and(eq(notes.deadmanStatus, "ok"), lte(notes.deadmanDueAt, now), isNull(notes.trashedAt)));
  for (const n of due) {
    const changes = { deadmanStatus: "late" as const, alertOwedAt: heldUntil(n, now), ...spellChanges("ok", "late", now) };
    await deps.db
      .update(notes)
      .set(changes)
      .where(and(eq(notes.id, n.id), eq(notes.deadmanStatus, "ok")));
    if (changes.alertOwedAt === null) await lateAlert(deps, { ...n, ...changes }, now);
  }
  return due.length + (await checkRuns(deps, now)) + (await sendOwedAlerts(deps, now)) + (await sendFollowUps(deps, now));
}

/** The alert of a stream that went late: a mail, and the alert webhook's message. */
async function lateAlert(deps: Deps, n: NoteRow, now: number): Promise<void> {
  const to = await recipient(deps, n);
  deps.writer.afterCommit(() => {
    deps.metrics.deadmanAlerts.inc();
    logEvent("warn", "dead-man alert sent", {
      note_id: n.id,
      silent_seconds: Math.round((now - n.lastWriteAt) / 1000),
      interval_seconds: n.expectedIntervalSeconds,
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
      intervalSeconds: n.expectedIntervalSeconds,
      schedule: scheduleOf(n),
      lastLines: await lastLines(deps, n.id),
      baseUrl: mailOrigin(deps),
      // A full stream is not silent: its writers are being refused, which is another fix.
      fullSince: n.fullSince === null ? null : iso(n.fullSince),
      ackUrl: await mintAckUrl(deps, n),
    }),
  );
  await armFollowUps(deps, n, now);
  const name = n.filename ?? n.title;
  const alert =
    n.fullSince === null
      ? { kind: "late" as const, title: `${name} has gone quiet`, text: `LATE: no write to ${name} for ${Math.round((now - n.lastWriteAt) / 1000)}s (${n.schedule === null ? `expected every ${n.expectedIntervalSeconds}s` : `scheduled "${n.schedule}" ${n.timezone}`})` }
      : { kind: "full" as const, title: `${name} is full and refusing writes`, text: `FULL: ${name} is full and refusing writes` };
  await raiseAlert(deps, n, alert, now);
}

/**
 * Every run that started (status start) and has not reported within its stream's
 * max_run_seconds: the stream becomes late and alerts once, like a missed deadline (or owes its
 * alert, inside quiet time or a window); the run is forgotten, so the next start begins a new one.
 */
async function checkRuns(deps: Deps, now: number): Promise<number> {
  const overdue = await deps.db
    .select()
    .from(notes)
    .where(and(isNotNull(notes.runStartedAt), isNotNull(notes.maxRunSeconds), isNull(notes.trashedAt), sql`${notes.runStartedAt} + ${notes.maxRunSeconds} * 1000 <= ${now}`));
  for (const n of overdue) {
    const wasAlerting = n.deadmanStatus === "late" || n.deadmanStatus === "failing";
    const held = wasAlerting ? null : heldUntil(n, now);
    const changes = { runStartedAt: null, ...(wasAlerting ? {} : { deadmanStatus: "late" as const, alertOwedAt: held, ...spellChanges(n.deadmanStatus, "late", now) }) };
    await deps.db.update(notes).set(changes).where(eq(notes.id, n.id));
    if (wasAlerting || held !== null) continue;
    await runAlert(deps, { ...n, ...changes, runStartedAt: n.runStartedAt }, now);
  }
  return overdue.length;
}

async function runAlert(deps: Deps, n: NoteRow, now: number): Promise<void> {
  const name = n.filename ?? n.title;
  await enqueueMail(
    deps,
    runOverdue({ to: await recipient(deps, n), noteTitle: n.title, filename: n.filename, noteId: n.id, startedAt: iso(n.runStartedAt!), maxRunSeconds: n.maxRunSeconds!, lastLines: await lastLines(deps, n.id), baseUrl: mailOrigin(deps), ackUrl: await mintAckUrl(deps, n) }),
  );
  await armFollowUps(deps, n, now);
  const text = `LATE: a run of ${name} started ${Math.round((now - n.runStartedAt!) / 1000)}s ago and has not reported (max ${n.maxRunSeconds}s)`;
  await raiseAlert(deps, n, { kind: "run", title: `${name}: a run has not finished`, text }, now);
}

/**
 * Alerts held back by quiet time or a maintenance window, once it has ended: a spell still on
 * (late, failing, or full) alerts now, once; one that ended meanwhile sends nothing. Clearing
 * alert_owed_at from the value read is the claim, so two sweeps never send one alert twice.
 */
async function sendOwedAlerts(deps: Deps, now: number): Promise<number> {
  const owed = await deps.db
    .select()
    .from(notes)
    .where(and(lte(notes.alertOwedAt, now), isNull(notes.trashedAt)));
  let sent = 0;
  for (const n of owed) {
    const on = alerting(n.deadmanStatus) || n.fullSince !== null;
    const held = on ? heldUntil(n, now) : null;
    const claimed = await deps.db
      .update(notes)
      .set({ alertOwedAt: held })
      .where(and(eq(notes.id, n.id), eq(notes.alertOwedAt, n.alertOwedAt!)))
      .returning({ id: notes.id });
    if (claimed.length === 0 || !on || held !== null) continue;
    sent++;
    if (n.deadmanStatus === "late") await lateAlert(deps, n, now);
    else if (n.deadmanStatus === "failing") await failedAlert(deps, n, now, (await lastLines(deps, n.id)).at(-1) ?? "");
    else await fullNotice(deps, n);
  }
  return sent;
}

async function failedAlert(deps: Deps, note: NoteRow, now: number, text: string): Promise<void> {
  const name = note.filename ?? note.title;
  await enqueueMail(deps, signalFailed({ to: await recipient(deps, note), noteTitle: note.title, filename: note.filename, noteId: note.id, at: iso(now), line: text, lastLines: await lastLines(deps, note.id), baseUrl: mailOrigin(deps), ackUrl: await mintAckUrl(deps, note) }));
  await armFollowUps(deps, note, now);
  await raiseAlert(deps, note, { kind: "failing", title: `${name} reported a failure`, text: `FAILED: ${name} reported a failure: ${text}` }, now);
}
