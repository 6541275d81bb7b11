import { and, asc, eq, gt, isNotNull, isNull, lte, sql } from "drizzle-orm";
import type { Deps } from "../../deps";
import { sqlRun } from "../../db/sql";
import { noteChunks, notes } from "../../db/tables";
import { ValidationFailed } from "../../http/errors";
import { logEvent } from "../../http/log";
import { iso } from "../../lib/clock";
import { bodyCapFor } from "../../limits/plans";
import { domainOf } from "../../mail/mailer";
import { enqueueMail } from "../../mail/queue";
import { streamFull } from "../../mail/templates";
import { mailOrigin } from "../../http/origin";
import { raiseAlert } from "../channels/alerts";
import { heldUntil } from "../deadman/quiet";
import { recipient } from "../deadman/recipient";
import type { NoteRow } from "../notes/repo";
import type { AppendHook } from "./append/hooks";
import { addStorage, getWorkspace, tierOf } from "../workspaces/repo";

export const MAX_RETENTION_DAYS = 3650;
const DAY_MS = 86_400_000;
/** Chunks one run of the age sweep removes at most: a long backlog is cleared over several runs, never in one long write. */
const SWEEP_CHUNKS = 10_000;

/**
 * The retention part of a PATCH, inside its write. Any change of it ends a full spell: the next
 * refusal, if the stream is still full, starts a new one and mails again.
 */
export function retentionChanges(
  note: NoteRow,
  input: { retention?: "reject" | "drop_oldest"; retention_days?: number | null },
): Partial<NoteRow> {
  if (input.retention === undefined && input.retention_days === undefined) return {};
  if (note.kind !== "stream") {
    const field = input.retention !== undefined ? "note.retention" : "note.retention_days";
    throw ValidationFailed.field(field, "not_a_stream", "retention belongs to streams (append-only notes)");
  }
  const changes: Partial<NoteRow> = { fullSince: null };
  if (input.retention !== undefined) {
    // The API's schema already holds to these two; a form's field is checked here.
    if (input.retention !== "reject" && input.retention !== "drop_oldest") {
      throw ValidationFailed.field("note.retention", "invalid", "retention must be reject or drop_oldest");
    }
    changes.retention = input.retention;
  }
  const days = input.retention_days;
  if (days !== undefined) {
    if (days !== null && (!Number.isInteger(days) || days < 1 || days > MAX_RETENTION_DAYS)) {
      throw ValidationFailed.field(
        "note.retention_days",
        "out_of_range",
        `retention_days must be a whole number from 1 to ${MAX_RETENTION_DAYS}, or null to keep lines of any age`,
      );
    }
    changes.retentionDays = days;
  }
  return changes;
}

/**
 * A full spell: from the first append a `reject` stream refuses for its size (one mail) to the
 * next append that fits.
 */
export const fullSpellOnAppend: AppendHook = {
  refusedFull,
  appended: (deps, { note }) => (note.fullSince === null ? undefined : endFullSpell(deps, note)),
};

/**
 * An append to this `reject` stream was refused for its size: the spell starts, in a write of its
 * own after the refusal (the refused append writes nothing). The row may be the batch's cached
 * one, so later refusals in the batch queue nothing more.
 */
function refusedFull(deps: Deps, note: NoteRow): void {
  const at = deps.clock.now();
  note.fullSince = at;
  deps.writer.write(() => startFullSpell(deps, note.id, at)).catch((e) => {
    console.error(JSON.stringify({ level: "error", msg: "could not mark a stream full", note: note.id, error: String(e) }));
  });
}

/**
 * Marks the stream full and queues its one mail, unless a spell is on or its retention changed
 * meanwhile. A paused stream sends no alert of any kind; inside quiet time or a maintenance window
 * the mail is owed from their end (the dead-man sweep sends it then if the stream is still full).
 */
async function startFullSpell(deps: Deps, noteId: string, at: number): Promise<void> {
  const [n] = await deps.db
    .update(notes)
    .set({ fullSince: at })
    .where(and(eq(notes.id, noteId), isNull(notes.fullSince), eq(notes.retention, "reject"), isNull(notes.trashedAt)))
    .returning({
      workspaceId: notes.workspaceId,
      title: notes.title,
      filename: notes.filename,
      alertEmail: notes.alertEmail,
      deadmanStatus: notes.deadmanStatus,
      quietUntil: notes.quietUntil,
      maintenance: notes.maintenance,
      alertOwedAt: notes.alertOwedAt,
      notify: notes.notify,
      webhookUrl: notes.webhookUrl,
      webhookStatus: notes.webhookStatus,
      alertWebhook: notes.alertWebhook,
      byteSize: notes.byteSize,
    });
  if (!n || n.deadmanStatus === "paused") return;
  const held = heldUntil(n, at);
  if (held !== null) {
    if (n.alertOwedAt === null) await deps.db.update(notes).set({ alertOwedAt: held }).where(eq(notes.id, noteId));
    return;
  }
  await fullNotice(deps, { id: noteId, ...n, fullSince: at });
}

/** The one mail of a full spell: which stream, since when, what to do. */
export async function fullNotice(
  deps: Deps,
  n: Pick<NoteRow, "id" | "workspaceId" | "title" | "filename" | "alertEmail" | "fullSince" | "notify" | "webhookUrl" | "webhookStatus" | "alertWebhook" | "byteSize">,
): Promise<void> {
  const noteId = n.id;
  const at = Number(n.fullSince);
  const ws = await getWorkspace(deps, n.workspaceId);
  const to = await recipient(deps, n);
  const capBytes = bodyCapFor(tierOf(deps, ws), "plain");
  deps.writer.afterCommit(() => {
    deps.metrics.fullStreamAlerts.inc();
    logEvent("warn", "full-stream alert sent", { note_id: noteId, cap_bytes: capBytes, to_domain: domainOf(to) });
  });
  await enqueueMail(
    deps,
    streamFull({
      to,
      noteTitle: n.title,
      filename: n.filename,
      noteId,
      since: iso(at),
      capBytes,
      baseUrl: mailOrigin(deps),
    }),
  );
  const name = n.filename ?? n.title;
  await raiseAlert(deps, { ...n, alertWebhook: Boolean(n.alertWebhook) }, { kind: "full", title: `${name} is full`, text: `FULL: ${name} is full and refusing writes since ${iso(at)}` }, at);
}

/** An append to a full stream went in: it fits again, so the full spell is over. */
async function endFullSpell(deps: Deps, note: NoteRow): Promise<void> {
  await sqlRun(deps.store, "UPDATE notes SET full_since = NULL WHERE id = ?", [note.id]);
  note.fullSince = null;
}

/**
 * The periodic sweep of `retention_days`: each stream that sets it loses its chunks older than
 * that, oldest first. Chunks are in time order per note, so the (note_id, seq) index yields the
 * expired ones first and the first younger chunk ends the scan: the cost is what it removes.
 * A stream that shrinks is no longer full.
 */
export async function expireOldLines(deps: Deps): Promise<number> {
  const now = deps.clock.now();
  const streams = await deps.db
    .select({ id: notes.id, workspaceId: notes.workspaceId, days: notes.retentionDays })
    .from(notes)
    .where(and(isNotNull(notes.retentionDays), isNull(notes.trashedAt)));
  let removed = 0;
  for (const n of streams) {
    const { bytes, lastSeq, count } = await expiredChunks(deps, n.id, now - n.days! * DAY_MS, SWEEP_CHUNKS - removed);
    if (count === 0) continue;
    await deps.db.delete(noteChunks).where(and(eq(noteChunks.noteId, n.id), lte(noteChunks.seq, lastSeq)));
    await deps.db
      .update(notes)
      .set({ byteSize: sql`${notes.byteSize} - ${bytes}`, fullSince: null })
      .where(eq(notes.id, n.id));
    await addStorage(deps, n.workspaceId, -bytes);
    removed += count;
    if (removed >= SWEEP_CHUNKS) break;
  }
  return removed;
}

/**
 * The stream's oldest chunks written before `before`, at most `max`: read in seq order a page at
 * a time (each twice the last), up to the first chunk that stays. A chunk's size is read only
 * when it goes (octet_length: its UTF-8 bytes on both databases), so the one that stays ends the
 * scan unread.
 */
async function expiredChunks(deps: Deps, noteId: string, before: number, max: number): Promise<{ bytes: number; lastSeq: number; count: number }> {
  let bytes = 0;
  let lastSeq = 0;
  let count = 0;
  for (let size = 8; count < max; size *= 2) {
    const limit = Math.min(size, max - count);
    const page = await deps.db
      .select({ seq: noteChunks.seq, bytes: sql<number | null>`CASE WHEN ${noteChunks.at} < ${before} THEN octet_length(${noteChunks.text}) END` })
      .from(noteChunks)
      .where(and(eq(noteChunks.noteId, noteId), gt(noteChunks.seq, lastSeq)))
      .orderBy(asc(noteChunks.seq))
      .limit(limit);
    for (const c of page) {
      if (c.bytes === null || count >= max) return { bytes, lastSeq, count };
      bytes += Number(c.bytes);
      lastSeq = c.seq;
      count++;
    }
    if (page.length < limit) break;
  }
  return { bytes, lastSeq, count };
}

