import { commit } from "../../db/commit";
import type { Ctx } from "../../deps";
import { notes } from "../../db/schema";
import { NoteLocked, NotFound, ValidationFailed } from "../../http/errors";
import { iso } from "../../lib/clock";
import { filenameProblem } from "../../lib/filename";
import { byteLength, hasLoneSurrogate, normaliseAppendText } from "../../lib/text";
import { bodyCapFor } from "../../limits/plans";
import { findStream, newNoteRow, visibleNote, type NoteRow } from "../notes/repo";
import { writableWorkspace } from "../notes/service";
import { requireScope } from "../tokens/service";
import { enqueueAppendDelivery } from "../webhooks/service";
import { assertNoteSize, assertNoteSlots, assertStorage } from "../workspaces/caps";
import { tierOf } from "../workspaces/repo";
import type { AppendResponse } from "./model";

function cleanText(text: string): string {
  if (hasLoneSurrogate(text)) throw ValidationFailed.field("text", "invalid", "text must be valid Unicode (no lone surrogates)");
  const clean = normaliseAppendText(text);
  if (clean.trim() === "") throw ValidationFailed.field("text", "blank", "text must contain something besides whitespace and control characters");
  return clean;
}

export function validateFilename(filename: string): void {
  const problem = filenameProblem(filename);
  if (problem) throw ValidationFailed.field("filename", problem.code, problem.message);
}

/** Appends to the stream with this filename, creating it on the first write (201 then 200). */
export async function appendByFilename({ ctx, filename, text }: { ctx: Ctx; filename: string; text: string }) {
  requireScope(ctx, "append");
  validateFilename(filename);
  const line = cleanText(text);
  return commit(
    ctx,
    (r) => (r.created ? 201 : 200),
    () => {
      const existing = findStream(ctx, filename);
      if (existing) return appendTo(ctx, existing, line, false);
      // A pinned token sees no other note, so it cannot bring one into being either.
      if (ctx.principal.noteId) throw new NotFound("note");
      return appendTo(ctx, createStream(ctx, filename), line, true);
    },
    { coalesce: true },
  );
}

export async function appendById({ ctx, id, text }: { ctx: Ctx; id: string; text: string }) {
  requireScope(ctx, "append");
  const line = cleanText(text);
  return commit(ctx, 200, () => appendTo(ctx, visibleNote(ctx, id), line, false), { coalesce: true });
}

function createStream(ctx: Ctx, filename: string): NoteRow {
  const { deps } = ctx;
  const ws = writableWorkspace(ctx);
  assertNoteSlots(deps, ws, tierOf(deps, ws), "plain");
  const row = newNoteRow({ workspaceId: ws.id, kind: "stream", filename, title: filename }, deps.clock.now());
  deps.db.insert(notes).values(row).run();
  return row;
}

/**
 * One chunk row and two counter updates: the cost does not depend on how large the note is.
 * Runs inside the writer's transaction, so the bytes and the accounting commit together.
 */
export function appendTo(ctx: Ctx, note: NoteRow, line: string, created: boolean): AppendResponse {
  const { deps } = ctx;
  if (note.format === "rich") throw new NoteLocked("rich-text notes are edited in the browser; the API writes plain text only");
  if (note.kind !== "stream") {
    throw ValidationFailed.field("id", "not_a_stream", "append works on streams; edit an editable note with PATCH");
  }
  // Earlier appends of this batch may not have reached the rows yet: read through the overlay.
  const pending = deps.writer.pending;
  const ws = writableWorkspace(ctx);
  ws.storageUsed += pending.storageDelta(ws.id);
  const tier = tierOf(deps, ws);
  const size = byteLength(line);
  const currentSize = pending.noteSize(note.id) ?? note.byteSize;
  const newSize = currentSize + size;
  assertNoteSize(tier, "plain", newSize, currentSize);
  assertStorage(ws, tier, size);
  const now = deps.clock.now();
  deps.db.$client.query("INSERT INTO note_chunks (note_id, text) VALUES (?, ?)").run(note.id, line);
  // The note's size and times and the workspace's storage are written once per batch.
  pending.setNote(note.id, newSize, now);
  pending.addStorage(ws.id, size);
  enqueueAppendDelivery(deps, note, line, newSize, now);
  const cap = bodyCapFor(tier, "plain");
  return {
    id: note.id,
    filename: note.filename,
    created,
    byte_size: newSize,
    bytes_remaining: cap === null ? null : Math.max(0, cap - newSize),
    storage_used: ws.storageUsed + size,
    storage_cap: tier.storage,
    updated_at: iso(now),
  };
}
