import { and, eq, isNull, lte } from "drizzle-orm";
import type { Deps } from "../../deps";
import { notes } from "../../db/tables";
import { ValidationFailed } from "../../http/errors";
import { mailOrigin } from "../../http/origin";
import { iso } from "../../lib/clock";
import { enqueueMail } from "../../mail/queue";
import { alertEscalated, alertRepeated } from "../../mail/templates";
import { isPlausibleEmail, normaliseEmail } from "../accounts/service";
import type { NoteRow } from "../notes/repo";
import { logAlert, raiseAlert } from "../channels/alerts";
import { enqueueChannelMessage } from "../channels/delivery";
import { mintAckUrl } from "./ack-links";
import { lastLines } from "./alert-lines";
import { heldUntil } from "./quiet";
import { recipient } from "./recipient";
import { MAX_INTERVAL_SECONDS } from "./watch";

/**
 * A spell is a stretch of a stream being late or failing, from the status change that starts it
 * to the one that ends it. Its first alert (service.ts, or the owed one after quiet time) arms the
 * follow-ups: the alert again every repeat_alert_seconds, at most REPEAT_LIMIT times, and once to
 * escalate_to after escalate_after_seconds from the spell's start; acknowledging stops both.
 * next_alert_at holds when the next of them is due, so the sweep reads only the rows due.
 */
export const REPEAT_LIMIT = 24;

type Status = NoteRow["deadmanStatus"];
export type SpellColumns = Pick<NoteRow, "spellStartedAt" | "alertedAt" | "alertRepeats" | "escalatedAt" | "acknowledgedAt" | "nextAlertAt">;
type FollowUpFields = Pick<NoteRow, "repeatAlertSeconds" | "escalateAfterSeconds" | "escalateTo"> & SpellColumns;

export type FollowUpInput = {
  repeat_alert_seconds?: number | null;
  escalate_after_seconds?: number | null;
  escalate_to?: string | null;
};

export const alerting = (s: Status): boolean => s === "late" || s === "failing";

/** What a status change does to the spell's bookkeeping: a new spell starts unacknowledged, an ended one is forgotten. */
export function spellChanges(before: Status, after: Status, now: number): Partial<SpellColumns> {
  if (after === before || (!alerting(after) && !alerting(before))) return {};
  return { spellStartedAt: alerting(after) ? now : null, alertedAt: null, alertRepeats: 0, escalatedAt: null, acknowledgedAt: null, nextAlertAt: null };
}

/** When the spell's next repeat or escalation is due, once its first alert went out; null for none. */
export function nextFollowUp(n: FollowUpFields): number | null {
  if (n.spellStartedAt === null || n.alertedAt === null || n.acknowledgedAt !== null) return null;
  const due: number[] = [];
  if (n.repeatAlertSeconds !== null && n.alertRepeats < REPEAT_LIMIT) due.push(Number(n.alertedAt) + n.repeatAlertSeconds * 1000);
  if (n.escalateAfterSeconds !== null && n.escalateTo !== null && n.escalatedAt === null) due.push(Number(n.spellStartedAt) + n.escalateAfterSeconds * 1000);
  return due.length === 0 ? null : Math.min(...due);
}

/** After a spell's first alert went out (inside the sweep's or the append's write): arms its follow-ups. */
export async function armFollowUps(deps: Deps, n: FollowUpFields & { id: string }, now: number): Promise<void> {
  const changes = { alertedAt: now, nextAlertAt: nextFollowUp({ ...n, alertedAt: now }) };
  await deps.db.update(notes).set(changes).where(eq(notes.id, n.id));
  Object.assign(n, changes);
}

/**
 * The repeat and escalation part of a PATCH. A repeat comes no more often than the minimum
 * interval; an escalation needs both its delay and its address. A spell already alerted picks the
 * new settings up at once.
 */
export function followUpChanges(deps: Deps, note: NoteRow, input: FollowUpInput): Partial<NoteRow> {
  const given = (["repeat_alert_seconds", "escalate_after_seconds", "escalate_to"] as const).find((f) => input[f] !== undefined);
  if (given === undefined) return {};
  if (note.kind !== "stream") throw ValidationFailed.field(`note.${given}`, "not_a_stream", "repeats and escalation belong to streams (append-only notes)");
  const min = deps.config.minIntervalSeconds;
  const changes: Partial<NoteRow> = {};
  for (const field of ["repeat_alert_seconds", "escalate_after_seconds"] as const) {
    const v = input[field];
    if (v === undefined) continue;
    if (v !== null && (!Number.isInteger(v) || v < min || v > MAX_INTERVAL_SECONDS)) {
      throw ValidationFailed.field(`note.${field}`, "out_of_range", `${field} must be a whole number from ${min} to ${MAX_INTERVAL_SECONDS}, or null`);
    }
    changes[field === "repeat_alert_seconds" ? "repeatAlertSeconds" : "escalateAfterSeconds"] = v;
  }
  if (input.escalate_to !== undefined) {
    // A channel id (chn_…, as written: channels/notify.ts checks it against the workspace's
    // channels on the same test) or an address; an address never becomes a channel id by folding.
    const raw = input.escalate_to;
    const channel = raw !== null && raw.startsWith("chn_");
    const to = raw === null || channel ? raw : normaliseEmail(raw);
    if (to !== null && !channel && !isPlausibleEmail(to)) throw ValidationFailed.field("note.escalate_to", "invalid", "escalate_to must be an e-mail address or a channel id (chn_…), or null");
    changes.escalateTo = to;
  }
  const after = { ...note, ...changes };
  if ((after.escalateAfterSeconds === null) !== (after.escalateTo === null)) {
    const missing = after.escalateTo === null ? "escalate_to" : "escalate_after_seconds";
    throw ValidationFailed.field(`note.${missing}`, "required", "an escalation needs both escalate_after_seconds and escalate_to");
  }
  changes.nextAlertAt = nextFollowUp(after);
  return changes;
}

/**
 * The repeats and escalations due now. Each row's due time read is its claim: the update that
 * moves it on matches only if no other sweep moved it first, so one alert goes per repeat and per
 * escalation whatever the number of instances. Inside quiet time or a window the follow-up waits
 * for its end; a spell acknowledged or ended meanwhile sends nothing.
 */
export async function sendFollowUps(deps: Deps, now: number): Promise<number> {
  const due = await deps.db
    .select()
    .from(notes)
    .where(and(lte(notes.nextAlertAt, now), isNull(notes.trashedAt)));
  let sent = 0;
  for (const n of due) {
    const on = alerting(n.deadmanStatus) && n.acknowledgedAt === null;
    const held = on ? heldUntil(n, now) : null;
    const repeat = on && held === null && n.repeatAlertSeconds !== null && n.alertRepeats < REPEAT_LIMIT && Number(n.alertedAt) + n.repeatAlertSeconds * 1000 <= now;
    const escalate = on && held === null && n.escalateTo !== null && n.escalateAfterSeconds !== null && n.escalatedAt === null && Number(n.spellStartedAt) + n.escalateAfterSeconds * 1000 <= now;
    const next: FollowUpFields = { ...n };
    if (repeat) Object.assign(next, { alertRepeats: n.alertRepeats + 1, alertedAt: now });
    if (escalate) next.escalatedAt = now;
    const changes = { alertRepeats: next.alertRepeats, alertedAt: next.alertedAt, escalatedAt: next.escalatedAt, nextAlertAt: !on ? null : held ?? nextFollowUp(next) };
    const claimed = await deps.db
      .update(notes)
      .set(changes)
      .where(and(eq(notes.id, n.id), eq(notes.nextAlertAt, n.nextAlertAt!)))
      .returning({ id: notes.id });
    if (claimed.length === 0) continue;
    if (repeat) await repeatAlert(deps, n, next.alertRepeats, now);
    if (escalate) await escalationAlert(deps, n, now);
    sent += Number(repeat) + Number(escalate);
  }
  return sent;
}

/** What a repeat and an escalation mail say alike: the stream, its spell so far, its last lines, a new acknowledge link. */
async function spellMail(deps: Deps, n: NoteRow, now: number) {
  const since = Number(n.spellStartedAt);
  return {
    noteTitle: n.title,
    filename: n.filename,
    noteId: n.id,
    status: n.deadmanStatus === "failing" ? ("failing" as const) : ("late" as const),
    since: iso(since),
    forMs: now - since,
    lastLines: await lastLines(deps, n.id),
    baseUrl: mailOrigin(deps),
    ackUrl: await mintAckUrl(deps, n),
  };
}

async function repeatAlert(deps: Deps, n: NoteRow, repeat: number, now: number): Promise<void> {
  const mail = await spellMail(deps, n, now);
  await enqueueMail(deps, alertRepeated({ ...mail, to: await recipient(deps, n), repeat, of: REPEAT_LIMIT }));
  const name = n.filename ?? n.title;
  const text = `STILL ${mail.status.toUpperCase()}: ${name} for ${Math.round(mail.forMs / 1000)}s (reminder ${repeat} of ${REPEAT_LIMIT})`;
  await raiseAlert(deps, n, { kind: "repeat", title: `${name} is still ${mail.status}`, text }, now);
}

async function escalationAlert(deps: Deps, n: NoteRow, now: number): Promise<void> {
  const mail = alertEscalated({ ...(await spellMail(deps, n, now)), to: n.escalateTo! });
  await logAlert(deps, n.id, "escalation", `ESCALATED: ${mail.subject.replace(/^\[notestream\] escalated: /, "")}`, now);
  if (!n.escalateTo!.startsWith("chn_")) return enqueueMail(deps, mail);
  // A channel deleted since is gone from escalate_to's reach: the mail to the stream's own recipient went already.
  await enqueueChannelMessage(deps, n.escalateTo!, { event: "alert", title: mail.subject.replace(/^\[notestream\] /, ""), text: mail.text, note: { id: n.id, filename: n.filename, title: n.title }, urgent: true });
}
