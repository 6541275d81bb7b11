import { and, asc, eq, gt, sql } from "drizzle-orm";
import { t } from "elysia";
import type { Deps } from "../../deps";
import { channels, noteChunks, notes, notifyCursors } from "../../db/tables";
import { defineQueue } from "../../jobs/define-queue";
import type { InWriteOutcome, JobOutcome } from "../../jobs/runner";
import { iso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import type { AppendHook } from "../streams/append/hooks";
import { recordAttempt, sendToChannel } from "./delivery";
import { notifyOf, type NotifyEntry } from "./notify";
import { messageRoom } from "./providers";
import { parseChannelUrl } from "./url";

/**
 * A stream's lines to the channels of its notify list that take `lines`. Nothing is queued per
 * line: each (stream, channel) has a cursor (notify_cursors) saying how far its lines went, and at
 * most one job that sends what is past it. An append queues that job when none is (scheduled_at);
 * the job sends one append's chunk (or, with batch_seconds, the window's lines, or under flood
 * control everything waiting, cut to the platform's size) and moves the cursor in the write that
 * settles it, so a line is sent once and in order, and queues itself again while lines wait.
 *
 * Flood control: at most FLOOD_LIMIT messages in any minute per stream and channel; past that,
 * one gathered message every GATHER_MS.
 */
const FLOOD_LIMIT = 20;
const GATHER_MS = 15_000;
const MINUTE = 60_000;
/** Chunks one message reads at most; the rest waits for the next. */
const READ_CHUNKS = 500;

const NotifyLines = t.Object({ noteId: t.String(), channelId: t.String() });
type NotifyLines = typeof NotifyLines.static;

export const notifyLines = defineQueue("notify-lines", NotifyLines, { run: sendLines, onFailed: unscheduled });

const parsed = new Map<string, NotifyEntry[]>();
/** The lines entries of a notify list, parsed once per list text (appends see the same text again and again). */
function lineEntries(notify: string): NotifyEntry[] {
  let entries = parsed.get(notify);
  if (!entries) {
    if (parsed.size > 1000) parsed.clear();
    entries = notifyOf({ notify }).filter((e) => e.events.includes("lines"));
    parsed.set(notify, entries);
  }
  return entries;
}

/** Each append to a stream that sends lines somewhere: the sending job, queued unless one is. */
export const notifyOnAppend: AppendHook = {
  appended(deps, { note, at }) {
    // Nothing to do for a stream without lines subscriptions: no pause (streams/append/maybe-promise.ts).
    if (note.notify === null) return undefined;
    const entries = lineEntries(note.notify);
    if (entries.length === 0) return undefined;
    return Promise.all(entries.map((e) => schedule(deps, note.id, e, at)));
  },
};

/** The cursor row of one (stream, channel) pair. */
const cursorOf = (p: NotifyLines) => and(eq(notifyCursors.noteId, p.noteId), eq(notifyCursors.channelId, p.channelId));

/** The pair's sending job, one at a time per pair (its serial key). */
const enqueueSend = (deps: Deps, p: NotifyLines, runAt: number) => notifyLines.enqueue(deps, p, { runAt, serialKey: `lines:${p.noteId}:${p.channelId}` });

/**
 * Claims the cursor's empty schedule (so one job per pair) and queues the job for its time. The
 * update always writes the row, so on PostgreSQL it waits for a job settling meanwhile, which then
 * sees this append's chunk and goes on (settle below).
 */
async function schedule(deps: Deps, noteId: string, e: NotifyEntry, now: number): Promise<void> {
  const runAt = now + (e.batch_seconds ?? 0) * 1000;
  const [row] = await deps.db
    .update(notifyCursors)
    .set({ scheduledAt: sql`COALESCE(${notifyCursors.scheduledAt}, ${runAt})` })
    .where(cursorOf({ noteId, channelId: e.channel_id }))
    .returning({ scheduledAt: notifyCursors.scheduledAt });
  if (row && Number(row.scheduledAt) === runAt) await enqueueSend(deps, { noteId, channelId: e.channel_id }, runAt);
}

async function sendLines(deps: Deps, p: NotifyLines): Promise<JobOutcome | InWriteOutcome> {
  const [row] = await deps.db
    .select({ cursor: notifyCursors, channel: channels, filename: notes.filename, title: notes.title, notify: notes.notify, trashedAt: notes.trashedAt })
    .from(notifyCursors)
    .innerJoin(channels, eq(channels.id, notifyCursors.channelId))
    .innerJoin(notes, eq(notes.id, notifyCursors.noteId))
    .where(cursorOf(p));
  if (!row || row.trashedAt !== null) return { fail: "the stream no longer sends lines to this channel" };
  if (row.channel.status !== "enabled") return { fail: "the channel is disabled" };
  const entry = notifyOf(row).find((e) => e.channel_id === p.channelId && e.events.includes("lines"));
  if (!entry) return { fail: "the stream no longer sends lines to this channel" };
  const now = deps.clock.now();
  const recent = (JSON.parse(row.cursor.recentSends) as number[]).filter((t) => t > now - MINUTE);
  const flooded = recent.length >= FLOOD_LIMIT;
  if (flooded && recent.at(-1)! + GATHER_MS > now) {
    // Queued too early for flood control (a retry, a clock step): wait for the next gathered message.
    return () => requeue(deps, p, recent.at(-1)! + GATHER_MS);
  }
  const gather = flooded || entry.batch_seconds !== null;
  const chunks = await deps.db
    .select({ seq: noteChunks.seq, text: noteChunks.text })
    .from(noteChunks)
    .where(and(eq(noteChunks.noteId, p.noteId), gt(noteChunks.seq, row.cursor.throughSeq)))
    .orderBy(asc(noteChunks.seq))
    .limit(gather ? READ_CHUNKS : 1);
  if (chunks.length === 0) return () => settle(deps, p, entry, row.cursor.throughSeq, recent, { ok: true });
  const name = row.filename ?? row.title;
  const lines = chunks.flatMap((c) => c.text.replace(/\n$/, "").split("\n"));
  const room = messageRoom(parseChannelUrl(row.channel.url, row.channel.format), name);
  const text = fitted(lines, room);
  const message = { deliveryId: newId("dlv"), event: "lines" as const, title: name, text, createdAt: iso(now), note: { id: p.noteId, filename: row.filename, title: row.title } };
  const sent = await sendToChannel(deps, row.channel, message);
  return async () => {
    await sent.inWrite?.();
    const outcome = await recordAttempt(deps, row.channel, message, sent.result);
    if (!("ok" in outcome)) return outcome;
    return settle(deps, p, entry, Number(chunks.at(-1)!.seq), [...recent, now], outcome);
  };
}

/**
 * In the write that settles a send: the cursor moved past what went (first, so a concurrent append's
 * claim waits for it), then the job queued again while lines wait (now, at the batch window's end,
 * or after the gathered message's pause), or the schedule cleared.
 */
async function settle(deps: Deps, p: NotifyLines, entry: NotifyEntry, through: number, sends: number[], outcome: JobOutcome): Promise<JobOutcome> {
  const now = deps.clock.now();
  await deps.db
    .update(notifyCursors)
    .set({ throughSeq: through, recentSends: JSON.stringify(sends.slice(-FLOOD_LIMIT)), scheduledAt: null })
    .where(cursorOf(p));
  const [more] = await deps.db
    .select({ seq: noteChunks.seq })
    .from(noteChunks)
    .where(and(eq(noteChunks.noteId, p.noteId), gt(noteChunks.seq, through)))
    .limit(1);
  if (more) {
    const flooded = sends.filter((t) => t > now - MINUTE).length >= FLOOD_LIMIT;
    await requeue(deps, p, flooded ? Math.max(now, sends.at(-1)! + GATHER_MS) : now + (entry.batch_seconds ?? 0) * 1000);
  }
  return outcome;
}

/**
 * The lines that fit the platform's message, in order; past that, "… and N more lines" (they stay
 * in the note, and are not sent later: the message says how many it left out).
 */
function fitted(lines: string[], room: { limit: number; size: (s: string) => number }): string {
  const all = lines.join("\n");
  if (room.size(all) <= room.limit) return all;
  const reserve = room.size(`\n… and ${lines.length} more lines`);
  let size = 0;
  let kept = 0;
  while (kept < lines.length && size + room.size(lines[kept]!) + (kept > 0 ? 1 : 0) + reserve <= room.limit) {
    size += room.size(lines[kept]!) + (kept > 0 ? 1 : 0);
    kept++;
  }
  const left = lines.length - kept;
  if (kept === 0) return `… ${left} lines, too long for one message`;
  return `${lines.slice(0, kept).join("\n")}\n… and ${left} more line${left === 1 ? "" : "s"}`;
}

async function requeue(deps: Deps, p: NotifyLines, runAt: number): Promise<JobOutcome> {
  await deps.db.update(notifyCursors).set({ scheduledAt: runAt }).where(cursorOf(p));
  await enqueueSend(deps, p, runAt);
  return { ok: true };
}

/** No job queued any more (done, or given up): the next append queues one. */
async function unscheduled(deps: Deps, p: NotifyLines): Promise<void> {
  await deps.db.update(notifyCursors).set({ scheduledAt: null }).where(cursorOf(p));
}
