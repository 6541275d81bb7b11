import { and, eq, inArray, notInArray, sql } from "drizzle-orm";
import { sqlRows } from "../../db/sql";
import type { Deps } from "../../deps";
import { channels, notifyCursors } from "../../db/tables";
import { ValidationFailed } from "../../http/errors";

/** One entry of a stream's `notify`: a channel and what of the stream goes to it. */
export interface NotifyEntry {
  channel_id: string;
  events: ("alerts" | "lines")[];
  batch_seconds: number | null;
}

export const MAX_NOTIFY = 10;
export const MAX_BATCH_SECONDS = 3600;

/** The stream's notify list as the row keeps it (JSON), [] for none. */
export function notifyOf(n: { notify: string | null }): NotifyEntry[] {
  return n.notify === null ? [] : (JSON.parse(n.notify) as NotifyEntry[]);
}

/** The notify JSON without one channel (it was deleted); null when nothing is left. */
export function withoutChannel(notify: string | null, channelId: string): string | null {
  const kept = notifyOf({ notify }).filter((e) => e.channel_id !== channelId);
  return kept.length === 0 ? null : JSON.stringify(kept);
}

type NotifyInput = { notify?: { channel_id: string; events?: string[]; batch_seconds?: number | null }[] | null; escalate_to?: string | null };

/**
 * The parts of a PATCH that name channels, checked: escalate_to when it is a channel id, and the
 * notify list (at most 10 entries, each a channel of the stream's workspace named once, events
 * `alerts` and/or `lines`, batch_seconds 1 to 3600). Every channel named is looked up in one query.
 */
export async function channelChanges(deps: Deps, note: { id: string; kind: string; workspaceId: string }, input: NotifyInput): Promise<{ notify?: string | null }> {
  const escalateTo = input.escalate_to?.startsWith("chn_") ? input.escalate_to : null;
  const list = input.notify === undefined ? undefined : (input.notify ?? []);
  if (list !== undefined && note.kind !== "stream") throw ValidationFailed.field("note.notify", "not_a_stream", "notify belongs to streams (append-only notes)");
  if (list !== undefined && list.length > MAX_NOTIFY) throw ValidationFailed.field("note.notify", "too_many", `a stream notifies at most ${MAX_NOTIFY} channels`);
  const named = [...(escalateTo ? [escalateTo] : []), ...(list ?? []).map((e) => e.channel_id)];
  const known = new Set(
    named.length === 0 ? [] : (await deps.db.select({ id: channels.id }).from(channels).where(and(eq(channels.workspaceId, note.workspaceId), inArray(channels.id, named)))).map((k) => k.id),
  );
  if (escalateTo && !known.has(escalateTo)) throw ValidationFailed.field("note.escalate_to", "unknown_channel", "escalate_to is an e-mail address or a channel of this workspace (chn_…)");
  if (list === undefined) return {};
  const notify = notifyJson(list, known);
  await syncCursors(deps, note.id, notify);
  return { notify };
}

/** A notify list checked against the workspace's `known` channel ids, as the row keeps it (null for none). */
function notifyJson(list: NonNullable<NotifyInput["notify"]>, known: Set<string>): string | null {
  const ids = list.map((e) => e.channel_id);
  const entries = list.map((e, i): NotifyEntry => {
    const at = `note.notify[${i}]`;
    if (!known.has(e.channel_id)) throw ValidationFailed.field(`${at}.channel_id`, "unknown_channel", "channel_id must name a channel of this workspace (GET /api/v1/channels)");
    if (ids.indexOf(e.channel_id) !== i) throw ValidationFailed.field(`${at}.channel_id`, "duplicate", "each channel appears once; list both events in one entry");
    const events = [...new Set(e.events ?? ["alerts"])];
    if (events.length === 0 || events.some((x) => x !== "alerts" && x !== "lines")) {
      throw ValidationFailed.field(`${at}.events`, "invalid", 'events is ["alerts"], ["lines"] or ["alerts", "lines"]');
    }
    const batch = e.batch_seconds ?? null;
    if (batch !== null && (!Number.isInteger(batch) || batch < 1 || batch > MAX_BATCH_SECONDS)) {
      throw ValidationFailed.field(`${at}.batch_seconds`, "out_of_range", `batch_seconds is null or a whole number from 1 to ${MAX_BATCH_SECONDS}`);
    }
    return { channel_id: e.channel_id, events: events as NotifyEntry["events"], batch_seconds: batch };
  });
  return entries.length === 0 ? null : JSON.stringify(entries);
}

/**
 * Inside a PATCH's write: a cursor for each channel newly taking lines, at the stream's last chunk
 * (lines written before are not sent), and none for channels that no longer do.
 */
async function syncCursors(deps: Deps, noteId: string, notify: string | null): Promise<void> {
  const wanted = notifyOf({ notify }).filter((e) => e.events.includes("lines")).map((e) => e.channel_id);
  await deps.db.delete(notifyCursors).where(and(eq(notifyCursors.noteId, noteId), wanted.length ? notInArray(notifyCursors.channelId, wanted) : undefined));
  if (wanted.length === 0) return;
  const [last] = await sqlRows<{ seq: number | string | null }>(deps.store, sql`SELECT max(seq) AS seq FROM note_chunks WHERE note_id = ${noteId}`);
  const through = Number(last?.seq ?? 0);
  for (const channelId of wanted) {
    await deps.db.insert(notifyCursors).values({ noteId, channelId, throughSeq: through }).onConflictDoNothing();
  }
}
