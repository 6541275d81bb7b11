import { replyOf } from "../../../http/commit";
import type { Ctx, Deps } from "../../../deps";
import { notes } from "../../../db/tables";
import { NoteLocked, NotFound, ValidationFailed } from "../../../http/errors";
import { iso } from "../../../lib/clock";
import { filenameProblem } from "../../../lib/filename";
import { byteLength, hasLoneSurrogate, normaliseAppendText } from "../../../lib/text";
import { bodyCapFor, type Tier } from "../../../limits/plans";
import { scheduleOf } from "../../deadman/schedule";
import { newNoteRow, streamByFilename, visibleNote, type NoteRow } from "../../notes/repo";
import { writableWorkspace } from "../../notes/service";
import { requireScope, seesNote } from "../../tokens/service";
import { assertNoteSize, assertNoteSlots, assertStorage } from "../../workspaces/caps";
import { assertWritable, getWorkspace, tierOf, type WorkspaceRow } from "../../workspaces/repo";
import { appendBatchOf, type AppendBatch, type BatchRows } from "./batch";
import { applyDrop, planDrop, type Drop } from "./drop";
import { runAppended } from "./hooks";
import { then, type MaybePromise } from "./maybe-promise";
import type { AppendResponse, Signal } from "./model";
import type { Reply } from "../../../http/reply";

function cleanText(text: string): string {
  if (hasLoneSurrogate(text)) throw ValidationFailed.field("text", "invalid", "text must be valid Unicode (no lone surrogates)");
  const clean = normaliseAppendText(text);
  if (clean.trim() === "") throw ValidationFailed.field("text", "blank", "text must contain something besides whitespace and control characters");
  return clean;
}

// Filenames already found acceptable: appends name the same few streams again and again.
const acceptedFilenames = new Set<string>();

export function validateFilename(filename: string): void {
  if (acceptedFilenames.has(filename)) return;
  const problem = filenameProblem(filename);
  if (problem) throw ValidationFailed.field("filename", problem.code, problem.message);
  if (acceptedFilenames.size >= 10_000) acceptedFilenames.clear();
  acceptedFilenames.add(filename);
}

/** Appends to the stream with this filename, creating it on the first write (201 then 200). */
export function appendByFilename({ ctx, filename, text, signal }: { ctx: Ctx; filename: string; text: string; signal?: Signal }) {
  requireScope(ctx, "append");
  validateFilename(filename);
  const line = cleanText(text);
  const batch = appendBatchOf(ctx.deps);
  return commitAppend(ctx, (r) => (r.created ? 201 : 200), () =>
    then(streamForAppend(ctx, batch, filename), ({ ws, note }) => {
      // A pinned token sees no other note, so it cannot bring one into being either.
      if (!note && ctx.principal.noteId) throw new NotFound("note");
      return then(checkAppend(ctx, batch, note ?? { filename }, line, ws), (plan) => applyAppend(ctx, batch, plan, signal));
    }),
  );
}

export function appendById({ ctx, id, text, signal }: { ctx: Ctx; id: string; text: string; signal?: Signal }) {
  requireScope(ctx, "append");
  const line = cleanText(text);
  const batch = appendBatchOf(ctx.deps);
  return commitAppend(ctx, 200, async () => applyAppend(ctx, batch, await checkAppend(ctx, batch, await visibleNote(ctx, id, { lock: true }), line), signal));
}

/**
 * An append through the single writer, coalesced into the writer's batch (http/commit.ts's
 * `commit` for the one hot path): one that needs no database round trip (most) runs without a
 * promise or a pause (maybe-promise.ts).
 */
function commitAppend(ctx: Ctx, status: number | ((r: AppendResponse) => number), run: () => MaybePromise<AppendResponse>): Promise<Reply<AppendResponse>> {
  return ctx.deps.writer.write(() => then(run(), (body) => replyOf(ctx, status, body)), { coalesce: true });
}

/** A workspace's row and its streams by filename, read once per writer batch. */
async function batchRows(deps: Deps, batch: AppendBatch, workspaceId: string): Promise<BatchRows> {
  const rows = batch.rows;
  let r = rows.get(workspaceId);
  // Locked until the batch commits (PostgreSQL): another instance's appends to the workspace wait, so caps hold across instances.
  if (!r) rows.set(workspaceId, (r = { ws: await getWorkspace(deps, workspaceId, { lock: true }), streams: new Map() }));
  return r;
}

/**
 * The caller's workspace and the stream with this filename as the caller may see it, from the
 * batch's row cache: a run of appends to one stream reads them once.
 */
function streamForAppend(ctx: Ctx, batch: AppendBatch, filename: string): MaybePromise<{ ws: WorkspaceRow; note: NoteRow | undefined }> {
  const cached = batch.rows.get(ctx.principal.workspaceId);
  const stream = cached?.streams.get(filename);
  // The cache is per workspace, not per token: the pin is applied to every append.
  if (cached && stream) return { ws: cached.ws, note: seesNote(ctx.principal, stream.id) ? stream : undefined };
  return readStreamForAppend(ctx, batch, filename);
}

async function readStreamForAppend(ctx: Ctx, batch: AppendBatch, filename: string): Promise<{ ws: WorkspaceRow; note: NoteRow | undefined }> {
  const { deps, principal } = ctx;
  // Not in the batch's cache (streamForAppend looked): the batch's first append reads (and on
  // PostgreSQL locks) the workspace and the stream, both sent at once: one round trip, and always
  // the workspace's lock before the stream's. A later append reads only the stream.
  const [rows, read] = await Promise.all([
    batchRows(deps, batch, principal.workspaceId),
    streamByFilename(deps, principal.workspaceId, filename, { lock: true }),
  ]);
  const note = rows.streams.get(filename) ?? read;
  if (note) rows.streams.set(filename, note);
  return { ws: rows.ws, note: note && seesNote(principal, note.id) ? note : undefined };
}

/** Appends inside a write that is already running (the inbox worker's). */
export async function appendTo(ctx: Ctx, note: NoteRow, line: string): Promise<AppendResponse> {
  const batch = appendBatchOf(ctx.deps);
  return applyAppend(ctx, batch, await checkAppend(ctx, batch, note, line));
}

interface AppendPlan {
  note: NoteRow | { filename: string };
  line: string;
  /** What the workspace's storage grows by: the line's bytes less any dropped. */
  size: number;
  newSize: number;
  ws: WorkspaceRow;
  /** The workspace's storage with this batch's earlier appends. */
  storageUsed: number;
  tier: Tier;
  cap: number | null;
  /** The oldest lines to remove first (retention drop_oldest at the cap). */
  drop: Drop | null;
}

/**
 * Every check of an append, and nothing written: an append's expected failures (caps, a locked
 * or missing note, a read-only account) all happen here, before its first write. The writer
 * relies on that to run appends without a savepoint each. (A refusal for size may queue a write
 * of its own, to run after this one: AppendHook.refusedFull.)
 */
function checkAppend(ctx: Ctx, batch: AppendBatch, note: NoteRow | { filename: string }, line: string, workspace?: WorkspaceRow): MaybePromise<AppendPlan> {
  const { deps } = ctx;
  if ("id" in note) {
    if (note.format === "rich") throw new NoteLocked("rich-text notes are edited in the browser; the API writes plain text only");
    if (note.kind !== "stream") {
      throw ValidationFailed.field("id", "not_a_stream", "append works on streams; edit an editable note with PATCH");
    }
  }
  if (!workspace) return writableWorkspace(ctx).then((ws) => checkAppend(ctx, batch, note, line, ws));
  // Earlier appends of this batch may not have reached the rows yet: read through the overlay.
  const ws = assertWritable(workspace);
  const storageUsed = ws.storageUsed + batch.storageDelta(ws.id);
  const tier = tierOf(deps, ws);
  const size = byteLength(line);
  const currentSize = "id" in note ? (batch.noteSize(note.id) ?? note.byteSize) : 0;
  const cap = bodyCapFor(tier, "plain");
  const planned = (drop: Drop | null): AppendPlan => {
    const newSize = currentSize + size - (drop ? drop.bytes : 0);
    assertNoteSize(tier, "plain", newSize, currentSize);
    const delta = drop ? size - drop.bytes : size;
    assertStorage(ws, tier, delta, storageUsed);
    return { note, line, size: delta, newSize, ws, storageUsed, tier, cap, drop };
  };
  if (!("id" in note)) return assertNoteSlots(deps, ws, tier, "plain").then(() => planned(null));
  // Past the cap, a stream's retention decides: make room by dropping its oldest lines (never
  // for a line larger than the cap itself), or refuse and start a full spell.
  if (cap !== null && currentSize + size > cap) {
    if (note.retention === "drop_oldest" && size <= cap) return planDrop(deps, batch, note.id, currentSize + size - cap).then(planned);
    if (note.retention === "reject" && note.fullSince === null) for (const refused of batch.hooks.refusedFull) refused(deps, note);
  }
  return planned(null);
}

/**
 * The line, the note's size and the workspace's storage go to the batch's pending writes (one
 * chunk row per stream and batch, one update per note and workspace); the note row is inserted
 * on the first write. Then each after-append hook enqueues what the append causes (AppendHook),
 * in the same write. The cost does not depend on how large the note is, and the bytes, the
 * accounting and what the hooks enqueued commit together.
 */
function applyAppend(ctx: Ctx, batch: AppendBatch, plan: AppendPlan, signal?: Signal): MaybePromise<AppendResponse> {
  const { deps } = ctx;
  const now = deps.clock.now();
  const created = !("id" in plan.note);
  const note: NoteRow =
    "id" in plan.note
      ? plan.note
      : newNoteRow({ workspaceId: plan.ws.id, kind: "stream", filename: plan.note.filename, title: plan.note.filename }, now);
  // What only the database can do (a new stream's row, a drop, what a hook enqueues); most
  // appends have none of it and go through without a pause.
  const first = created ? insertStream(deps, batch, note) : plan.drop ? applyDrop(deps, batch, note.id, plan.drop) : undefined;
  return then(first, () => {
    batch.addText(note.id, plan.line);
    batch.setNote(note.id, plan.newSize, now, note.expectedIntervalSeconds != null, scheduleOf(note));
    batch.addStorage(plan.ws.id, plan.size);
    const appended = { note, line: plan.line, byteSize: plan.newSize, at: now, tier: plan.tier, signal };
    return then(runAppended(batch.hooks.appended, deps, appended), () => appendAnswer(plan, note, created, now));
  });
}

async function insertStream(deps: Deps, batch: AppendBatch, note: NoteRow): Promise<void> {
  await deps.db.insert(notes).values(note);
  (await batchRows(deps, batch, note.workspaceId)).streams.set(note.filename!, note);
}

function appendAnswer(plan: AppendPlan, note: NoteRow, created: boolean, now: number): AppendResponse {
  const cap = plan.cap;
  return {
    id: note.id,
    filename: note.filename,
    created,
    byte_size: plan.newSize,
    bytes_remaining: cap === null ? null : Math.max(0, cap - plan.newSize),
    storage_used: plan.storageUsed + plan.size,
    storage_cap: plan.tier.storage,
    dropped_bytes: plan.drop ? plan.drop.bytes : 0,
    updated_at: iso(now),
  };
}
