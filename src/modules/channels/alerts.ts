import { and, eq, inArray } from "drizzle-orm";
import type { Deps } from "../../deps";
import { alertLog, channels } from "../../db/tables";
import type { NoteRow } from "../notes/repo";
import { enqueueAlertDelivery } from "../webhooks/delivery";
import { enqueueChannelMessage } from "./delivery";
import { notifyOf } from "./notify";

/** What raised an alert; the alert log keeps it for digests. */
type AlertKind = "late" | "failing" | "full" | "run" | "recovered" | "repeat" | "escalation" | "rule";

type AlertNote = Pick<NoteRow, "id" | "filename" | "title" | "notify" | "webhookUrl" | "webhookStatus" | "alertWebhook" | "byteSize">;

/**
 * Inside the write that raises an alert (the mail is the caller's): the alert logged, sent to the
 * stream's webhook when it asks for alerts, and to every enabled channel of its notify list that
 * takes alerts. `title` is what a push notification shows; `text` the webhook's one line.
 */
export async function raiseAlert(deps: Deps, note: AlertNote, alert: { kind: AlertKind; title: string; text: string }, now: number): Promise<void> {
  await logAlert(deps, note.id, alert.kind, alert.text, now);
  await enqueueAlertDelivery(deps, note, alert.text, now);
  const wanted = notifyOf(note).filter((e) => e.events.includes("alerts")).map((e) => e.channel_id);
  if (wanted.length === 0) return;
  const enabled = await deps.db
    .select({ id: channels.id })
    .from(channels)
    .where(and(inArray(channels.id, wanted), eq(channels.status, "enabled")));
  for (const { id } of enabled) {
    await enqueueChannelMessage(deps, id, {
      event: "alert",
      title: alert.title,
      text: alert.text,
      note: { id: note.id, filename: note.filename, title: note.title },
      urgent: alert.kind !== "recovered",
    });
  }
}

/** One row of the alert log (digests count them). */
export async function logAlert(deps: Deps, noteId: string, kind: AlertKind, text: string, now: number): Promise<void> {
  await deps.db.insert(alertLog).values({ noteId, at: now, kind, text });
}
