// The settings page's "watching" cards: a cron schedule (in words, with its next due time), quiet
// and pause, and the maintenance windows. Their forms' routes are in watch-pages.ts.
import cronstrue from "cronstrue";
import { iso } from "../../lib/clock";
import { inZone, wallTimeText } from "../../lib/zoned-time";
import { html, type Html } from "../../web/html";
import { csrfField } from "../../web/layout";
import type { WebSession } from "../../web/session";
import { heldUntil, MAX_WINDOWS, windowsOf } from "../deadman/quiet";
import { alerting, REPEAT_LIMIT } from "../deadman/spell";
import { nextRunAfter } from "../deadman/schedule";
import type { NoteRow } from "../notes/repo";
import { distinct, fieldProblem, formProblem, invalid, typed, type FormState } from "./settings-forms";

/** "At 03:00, Monday through Friday": a cron expression in words; the expression itself where cronstrue cannot say it. */
export function scheduleWords(expression: string): string {
  try {
    return cronstrue.toString(expression, { use24HourTimeFormat: true });
  } catch {
    return expression;
  }
}

/** "1 hour", "90 minutes", "2 days": a length of time as the cards say it. */
export function lengthText(seconds: number): string {
  const unit = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  if (seconds % 86_400 === 0) return unit(seconds / 86_400, "day");
  if (seconds % 3600 === 0) return unit(seconds / 3600, "hour");
  if (seconds % 60 === 0) return unit(seconds / 60, "minute");
  return unit(seconds, "second");
}

/**
 * A moment in the stream's zone, and in the viewer's: the page's script writes the second in the
 * browser's zone (times.js, `data-local`); without it, UTC.
 */
export function bothZones(at: number, zone: string): Html {
  const stamp = iso(at);
  return html`<strong>${inZone(at, zone)}</strong> <span class="muted small">(your time: <time datetime="${stamp}" data-local>${stamp.replace("T", " ").slice(0, 16)} UTC</time>)</span>`;
}

const minutes = (seconds: number) => String(+(seconds / 60).toFixed(2));

/** Where the plan has no dead-man's switch the form is shown disabled, as the interval's is. */
export function scheduleCard(s: WebSession, note: NoteRow, state: FormState | undefined, available: boolean, now: number): Html {
  const scheduled = note.schedule !== null;
  const next = scheduled ? nextRunAfter(note.schedule!, note.timezone, now) : null;
  const due = note.deadmanStatus !== "off" && note.deadmanDueAt !== null ? Number(note.deadmanDueAt) : null;
  const summary = scheduled
    ? html`<div class="schedule-now"><p>Runs <strong data-schedule-words>${scheduleWords(note.schedule!)}</strong> <span class="muted small">(<code>${note.schedule!}</code>, ${note.timezone}), with ${lengthText(note.graceSeconds)} of grace.</span></p>
    <p class="small">${
      due !== null
        ? html`<span data-due>Late unless a line comes by ${bothZones(due, note.timezone)}</span>.`
        : html`<span data-due>Waiting for the first write: the watch starts with it.</span>`
    }${next !== null ? html` Next scheduled run: ${bothZones(next, note.timezone)}.` : ""}</p></div>`
    : "";
  const fields = html`<div class="row"><label class="grow"><span>Cron schedule (5 fields, or 6 with seconds first)</span><input type="text" name="schedule" value="${typed(state, "schedule", "schedule", note.schedule ?? "")}" placeholder="0 3 * * 1-5" spellcheck="false" autocomplete="off"${invalid(state, "schedule", "schedule")}>${fieldProblem(state, "schedule", "schedule")}</label>
    <label class="grow"><span>Time zone</span><input type="text" name="timezone" value="${typed(state, "schedule", "timezone", note.timezone)}" placeholder="Europe/Berlin" spellcheck="false"${invalid(state, "schedule", "timezone")}>${fieldProblem(state, "schedule", "timezone")}</label>
    <label><span>Grace (minutes)</span><input type="number" name="grace_minutes" min="0.02" step="any" value="${typed(state, "schedule", "grace_minutes", minutes(note.graceSeconds))}"${invalid(state, "schedule", "grace_minutes")}>${fieldProblem(state, "schedule", "grace_minutes")}</label></div>`;
  return html`<div class="card${available ? "" : " gated"}" id="schedule"><h2>Expect writes on a schedule ${scheduled ? html`<span class="badge ok">on</span>` : ""}</h2>
  <p class="small">For a job that runs at set times, such as a backup at 03:00 on weekdays: the stream is late when no line comes within the grace after a scheduled time. Saving a schedule replaces the interval above, and the reverse.</p>
  ${summary}${formProblem(state, "schedule")}
  <form method="post" action="/notes/${note.id}/schedule">${csrfField(s)}<fieldset class="group"${available ? "" : html` disabled`}>${fields}
    <div class="row"><button class="primary">Save schedule</button>${scheduled ? html`<button name="remove" value="yes">Remove the schedule</button>` : ""}</div></fieldset>
  </form>
</div>`;
}

/** What holds alerts back now, in words: a pause, quiet time, or a maintenance window. */
function quietState(note: NoteRow, now: number): Html {
  if (note.deadmanStatus === "paused") return html`<p class="flash" data-quiet-state="paused"><span class="badge paused">paused</span> No alert of any kind until the next write, which resumes watching.</p>`;
  const held = heldUntil(note, now);
  if (held === null) return html`<p class="small muted" data-quiet-state="none">Alerts go out as they happen.</p>`;
  const quiet = note.quietUntil !== null && Number(note.quietUntil) > now;
  return html`<p class="flash" data-quiet-state="${quiet ? "quiet" : "maintenance"}"><span class="badge quiet">quiet</span> ${quiet ? "Quiet" : "In a maintenance window"} until ${bothZones(held, note.timezone)}: no alert goes out before then; one still on then goes out once.</p>`;
}

/** Pause, quiet for a while or until a time, and the recurring maintenance windows. */
export function quietCard(s: WebSession, note: NoteRow, state: FormState | undefined, now: number): Html {
  const armed = note.deadmanStatus !== "off";
  const quiet = note.quietUntil !== null && Number(note.quietUntil) > now;
  const untilValue = typed(state, "quiet", "quiet_until", quiet ? wallTimeText(Number(note.quietUntil), note.timezone) : "");
  return html`<div class="card" id="quiet"><h2>Quiet and maintenance</h2>
  ${quietState(note, now)}${formProblem(state, "quiet")}
  <div class="row">${
    armed && note.deadmanStatus !== "paused"
      ? html`<form method="post" action="/notes/${note.id}/pause">${csrfField(s)}<button>Pause until the next write</button></form>`
      : ""
  }<form method="post" action="/notes/${note.id}/quiet" class="row">${csrfField(s)}<button name="for" value="3600">Quiet for 1 hour</button><button name="for" value="86400">Quiet for 24 hours</button>${
    quiet ? html`<button name="end" value="yes">End quiet</button>` : ""
  }</form></div>
  <form method="post" action="/notes/${note.id}/quiet" class="mt10">${csrfField(s)}<div class="row"><label class="grow"><span>Quiet until (${note.timezone})</span><input type="datetime-local" name="quiet_until" value="${untilValue}"${invalid(state, "quiet", "quiet_until")}>${fieldProblem(state, "quiet", "quiet_until")}</label><button>Keep quiet until then</button></div></form>
  ${windowsPart(s, note, state)}
</div>`;
}

function windowsPart(s: WebSession, note: NoteRow, state: FormState | undefined): Html {
  const windows = windowsOf(note);
  const names = distinct(
    windows.map((w) => `Remove the window ${scheduleWords(w.schedule)}`),
    windows.map((w) => `${w.schedule}, ${w.timezone}`),
  );
  const list = windows.length
    ? html`<table class="cards windows"><thead><tr><th>When</th><th>Zone</th><th>For</th><th><span class="sr-only">Action</span></th></tr></thead><tbody>${windows.map(
        (w, i) =>
          html`<tr data-window="${i}"><td data-label="When">${scheduleWords(w.schedule)} <code class="small">${w.schedule}</code></td><td data-label="Zone">${w.timezone}</td><td data-label="For">${lengthText(w.duration_seconds)}</td><td data-label=""><form method="post" action="/notes/${note.id}/maintenance/remove">${csrfField(s)}<input type="hidden" name="index" value="${i}"><input type="hidden" name="schedule" value="${w.schedule}"><button aria-label="${names[i]!}">Remove</button></form></td></tr>`,
      )}</tbody></table>`
    : html`<p class="muted small">None yet.</p>`;
  return html`<h3 class="small muted">Maintenance windows</h3>
  <p class="small">Recurring times without alerts, such as Sundays 02:00 to 04:00: no alert starts inside one; a stream still late when it ends alerts then. Up to ${MAX_WINDOWS}.</p>
  ${list}${formProblem(state, "window")}
  <form method="post" action="/notes/${note.id}/maintenance" class="mt10">${csrfField(s)}<div class="row"><label class="grow"><span>Opens at (cron)</span><input type="text" name="window_schedule" value="${typed(state, "window", "window_schedule", "")}" placeholder="0 2 * * 0" spellcheck="false" autocomplete="off"${invalid(state, "window", "window_schedule")}>${fieldProblem(state, "window", "window_schedule")}</label>
    <label class="grow"><span>Time zone</span><input type="text" name="window_timezone" value="${typed(state, "window", "window_timezone", note.timezone)}" spellcheck="false"${invalid(state, "window", "window_timezone")}>${fieldProblem(state, "window", "window_timezone")}</label>
    <label><span>For (minutes)</span><input type="number" name="window_minutes" min="1" step="1" value="${typed(state, "window", "window_minutes", "")}" placeholder="120"${invalid(state, "window", "window_minutes")}>${fieldProblem(state, "window", "window_minutes")}</label></div>
    <div class="row"><button class="primary">Add the window</button></div></form>`;
}

/** The spell the stream is in, and the button that acknowledges it (or when it was). */
function ackPart(s: WebSession, note: NoteRow): Html | "" {
  if (!alerting(note.deadmanStatus) || note.spellStartedAt === null) return "";
  const since = html`${note.deadmanStatus === "failing" ? "Failing" : "Late"} since ${bothZones(Number(note.spellStartedAt), note.timezone)}`;
  if (note.acknowledgedAt !== null) {
    return html`<p class="flash" data-ack="done">${since}. <span class="badge acknowledged">acknowledged</span> ${inZone(Number(note.acknowledgedAt), note.timezone)}: no more reminders or escalation for this alert.</p>`;
  }
  return html`<div class="flash error row spread" data-ack="open"><span>${since}.</span><form method="post" action="/notes/${note.id}/ack">${csrfField(s)}<button class="primary">Acknowledge</button></form></div>`;
}

/** Repeats while late or failing, escalation to a second address, and acknowledging the alert. */
export function followUpsCard(s: WebSession, note: NoteRow, state: FormState | undefined): Html {
  const inMinutes = (seconds: number | null) => (seconds === null ? "" : minutes(seconds));
  return html`<div class="card" id="followups"><h2>Reminders and escalation</h2>
  ${ackPart(s, note)}${formProblem(state, "followups")}
  <p class="small">While the stream stays late or failing, the alert can repeat (at most ${REPEAT_LIMIT} times), and after a while go to a second address too, once, unless someone acknowledged it: here, with the link in every alert mail, or by <code>POST /api/v1/notes/{id}/ack</code>.</p>
  <form method="post" action="/notes/${note.id}/followups">${csrfField(s)}
    <div class="row"><label class="grow"><span>Repeat the alert every (minutes; empty: never)</span><input type="number" name="repeat_minutes" min="1" step="any" value="${typed(state, "followups", "repeat_minutes", inMinutes(note.repeatAlertSeconds))}"${invalid(state, "followups", "repeat_minutes")}>${fieldProblem(state, "followups", "repeat_minutes")}</label>
    <label class="grow"><span>Escalate after (minutes; empty: never)</span><input type="number" name="escalate_minutes" min="1" step="any" value="${typed(state, "followups", "escalate_minutes", inMinutes(note.escalateAfterSeconds))}"${invalid(state, "followups", "escalate_minutes")}>${fieldProblem(state, "followups", "escalate_minutes")}</label></div>
    <label><span>Escalate to (an e-mail address)</span><input type="email" name="escalate_to" value="${typed(state, "followups", "escalate_to", note.escalateTo ?? "")}"${invalid(state, "followups", "escalate_to")}>${fieldProblem(state, "followups", "escalate_to")}</label>
    <div class="row"><button class="primary">Save</button></div>
  </form>
</div>`;
}
