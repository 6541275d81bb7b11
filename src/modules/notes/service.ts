import { eq } from "drizzle-orm";
import { commit } from "../../http/commit";
import type { Reply } from "../../http/reply";
import type { Ctx } from "../../deps";
import { notes } from "../../db/tables";
import { AppError, NoteLocked, ValidationFailed, type FieldProblem } from "../../http/errors";
import type { Page } from "../../lib/pagination";
import { byteLength, hasLoneSurrogate, stripControl, titleProblem } from "../../lib/text";
import { assertFolderIdWellFormed, assertFolderInWorkspace } from "../folders/repo";
import { webhookChanges } from "../webhooks/service";
import { deadmanChanges } from "../deadman/service";
import { channelChanges } from "../channels/notify";
import { retentionChanges } from "../streams/retention";
import { rulesChanges } from "../rules/rules";
import { inboxTemplateChanges } from "../inbox/template/field";
import { captureBeforeSave } from "../snapshots/capture";
import { requireScope, requireUnpinned } from "../tokens/service";
import { assertNoteSize, assertNoteSlots, assertStorage } from "../workspaces/caps";
import { addStorage, assertWritable, getWorkspace, tierOf, type WorkspaceRow } from "../workspaces/repo";
import { MAX_BULK, type CreateNoteInput, type NoteRecord, type UpdateNoteInput } from "./model";
import { listNoteRows, newNoteRow, readBody, toRecord, visibleNote, visibleStream, type NoteRow } from "./repo";
import { moveToTrash } from "./trash";

export const DEFAULT_TITLE = "Untitled";

/**
 * The workspace, checked for being writable; call inside the write so state and caps are exact.
 * `lock`: held until the write commits (PostgreSQL), taken before a note's row (as an append does).
 */
export async function writableWorkspace(ctx: Ctx, opts: { lock?: boolean } = {}): Promise<WorkspaceRow> {
  return assertWritable(await getWorkspace(ctx.deps, ctx.principal.workspaceId, opts));
}

function cleanTitle(raw: string, field: string, problems: FieldProblem[]): string {
  const title = stripControl(raw);
  const problem = titleProblem(title);
  if (problem) problems.push({ field, code: "too_long", message: problem });
  return title;
}

function checkText(value: string, field: string, problems: FieldProblem[]): void {
  if (hasLoneSurrogate(value)) problems.push({ field, code: "invalid", message: "must be valid Unicode (no lone surrogates)" });
  // PostgreSQL's text cannot hold U+0000: refused on SQLite too, so the two databases answer alike.
  if (value.includes("\u0000")) problems.push({ field, code: "invalid", message: "must not contain the NUL character (U+0000)" });
}

/** Validates a create payload; shared by single and bulk create. */
export function validateCreate(input: CreateNoteInput, prefix = "note"): { title: string; body: string; problems: FieldProblem[] } {
  const problems: FieldProblem[] = [];
  const title = input.title === undefined ? DEFAULT_TITLE : cleanTitle(input.title, `${prefix}.title`, problems);
  const body = input.plain_body ?? "";
  checkText(title, `${prefix}.title`, problems);
  checkText(body, `${prefix}.plain_body`, problems);
  return { title, body, problems };
}

export async function createNote({ ctx, input }: { ctx: Ctx; input: CreateNoteInput }): Promise<Reply<NoteRecord>> {
  requireScope(ctx, "write");
  requireUnpinned(ctx, "create notes");
  const { title, body, problems } = validateCreate(input);
  if (problems.length) throw new ValidationFailed(problems);
  const { deps } = ctx;
  return commit(ctx, 201, async () => {
    const ws = await writableWorkspace(ctx);
    const tier = tierOf(deps, ws);
    await assertFolderInWorkspace(deps, ws.id, input.folder_id, "note.folder_id");
    const size = byteLength(body);
    await assertNoteSlots(deps, ws, tier, "plain");
    assertNoteSize(tier, "plain", size, 0);
    assertStorage(ws, tier, size);
    const row = newEditableRow(ws.id, title, body, input.folder_id ?? null, deps.clock.now());
    await deps.db.insert(notes).values(row);
    await addStorage(deps, ws.id, size);
    return toRecord(ctx, row, body);
  });
}

/**
 * Creates 1 to 50 editable notes in one transaction: any invalid note, or a cap the batch as a
 * whole would pass, and nothing is written. Counts as one write for rate limits.
 */
export async function bulkCreateNotes({ ctx, inputs }: { ctx: Ctx; inputs: CreateNoteInput[] }): Promise<Reply<NoteRecord[]>> {
  requireScope(ctx, "write");
  requireUnpinned(ctx, "create notes");
  if (inputs.length < 1 || inputs.length > MAX_BULK) {
    throw ValidationFailed.field("notes", inputs.length < 1 ? "blank" : "too_long", `send 1 to ${MAX_BULK} notes; got ${inputs.length}`);
  }
  const checked = inputs.map((input, index) => {
    const v = validateCreate(input, `notes.${index}`);
    return { input, ...v, problems: v.problems.map((p) => ({ ...p, index })) };
  });
  const problems = checked.flatMap((c) => c.problems);
  if (problems.length) throw new ValidationFailed(problems);
  const { deps } = ctx;
  return commit(ctx, 201, async () => {
    const ws = await writableWorkspace(ctx);
    const tier = tierOf(deps, ws);
    if (!tier.bulk) throw new AppError("plan_required", `bulk create is not available on the ${tier.name} plan`);
    const folderProblems: FieldProblem[] = [];
    for (const [index, { input }] of checked.entries()) {
      try {
        await assertFolderInWorkspace(deps, ws.id, input.folder_id, `notes.${index}.folder_id`);
      } catch (e) {
        if (!(e instanceof ValidationFailed)) throw e;
        folderProblems.push(...(e.details as FieldProblem[]).map((p) => ({ ...p, index })));
      }
    }
    if (folderProblems.length) throw new ValidationFailed(folderProblems);
    let total = 0;
    checked.forEach(({ body }) => {
      const size = byteLength(body);
      assertNoteSize(tier, "plain", size, 0);
      total += size;
    });
    await assertNoteSlots(deps, ws, tier, "plain", checked.length);
    assertStorage(ws, tier, total);
    const now = deps.clock.now();
    const records: NoteRecord[] = [];
    for (const { input, title, body } of checked) {
      const row = newEditableRow(ws.id, title, body, input.folder_id ?? null, now);
      await deps.db.insert(notes).values(row);
      records.push(toRecord(ctx, row, body));
    }
    await addStorage(deps, ws.id, total);
    return records;
  });
}

function newEditableRow(workspaceId: string, title: string, body: string, folderId: string | null, now: number): NoteRow {
  return newNoteRow({ workspaceId, kind: "editable", title, body, folderId, byteSize: byteLength(body) }, now);
}

export async function getNote({ ctx, id }: { ctx: Ctx; id: string }): Promise<NoteRecord> {
  requireScope(ctx, "read");
  const row = await visibleNote(ctx, id);
  return toRecord(ctx, row, await readBody(ctx.deps, row));
}

export async function getNoteByFilename({ ctx, filename }: { ctx: Ctx; filename: string }): Promise<NoteRecord> {
  requireScope(ctx, "read");
  const row = await visibleStream(ctx, filename);
  return toRecord(ctx, row, await readBody(ctx.deps, row));
}

export async function listNotes({
  ctx,
  filter,
  page,
}: {
  ctx: Ctx;
  filter: { folderId?: string; kind?: "stream" | "editable" };
  page: Page;
}): Promise<{ items: NoteRecord[]; total: number }> {
  requireScope(ctx, "read");
  if (filter.folderId !== undefined) assertFolderIdWellFormed(filter.folderId, "folder_id");
  const { rows, total } = await listNoteRows(ctx, filter, page);
  return { items: rows.map((r) => toRecord(ctx, r)), total };
}

export async function updateNote({ ctx, id, input }: { ctx: Ctx; id: string; input: UpdateNoteInput }): Promise<Reply<NoteRecord>> {
  requireScope(ctx, "write");
  const problems: FieldProblem[] = [];
  const title = input.title === undefined ? undefined : cleanTitle(input.title, "note.title", problems);
  if (title !== undefined) checkText(title, "note.title", problems);
  if (input.plain_body !== undefined) checkText(input.plain_body, "note.plain_body", problems);
  if (problems.length) throw new ValidationFailed(problems);
  const { deps } = ctx;
  return commit(ctx, 200, async () => {
    const note = await visibleNote(ctx, id);
    if (input.format !== undefined && input.format !== note.format) {
      throw ValidationFailed.field("note.format", "immutable", "format cannot change; delete the note and create it again");
    }
    const changesContent = title !== undefined || input.plain_body !== undefined;
    if (note.format === "rich" && changesContent) {
      throw new NoteLocked("rich-text notes are edited in the browser; the API writes plain text only");
    }
    if (note.kind === "stream" && input.plain_body !== undefined) {
      throw new NoteLocked("a stream's body cannot be replaced; append to it instead");
    }
    const ws = await writableWorkspace(ctx);
    const tier = tierOf(deps, ws);
    await assertFolderInWorkspace(deps, ws.id, input.folder_id, "note.folder_id");
    const now = deps.clock.now();
    const next: NoteRow = { ...note };
    if (input.folder_id !== undefined) next.folderId = input.folder_id;
    if (title !== undefined) next.title = title;
    let delta = 0;
    const webhook = await webhookChanges(deps, note, input);
    Object.assign(next, webhook, deadmanChanges(deps, tier, note, input), retentionChanges(note, input), await channelChanges(deps, note, input), rulesChanges(note, input), inboxTemplateChanges(note, input));
    if (input.plain_body !== undefined) {
      const size = byteLength(input.plain_body);
      assertNoteSize(tier, "plain", size, note.byteSize);
      delta = size - note.byteSize;
      assertStorage(ws, tier, delta);
      next.body = input.plain_body;
      next.byteSize = size;
    }
    const contentChanged = next.title !== note.title || next.body !== note.body;
    if (contentChanged) {
      // Streams never snapshot; editable notes keep what they were before this save.
      if (note.kind === "editable") await captureBeforeSave(deps, note, now);
      next.lastWriteAt = now;
    }
    if (contentChanged || next.folderId !== note.folderId) next.updatedAt = now;
    const { id: _id, ...columns } = next;
    await deps.db.update(notes).set(columns).where(eq(notes.id, note.id));
    await addStorage(deps, ws.id, delta);
    return toRecord(ctx, next, await readBody(deps, next));
  });
}

export async function deleteNote({ ctx, id }: { ctx: Ctx; id: string }): Promise<Reply<{ id: string; deleted: true }>> {
  requireScope(ctx, "write");
  const { deps } = ctx;
  // Runs on a full disk too: deleting, then purging, is how a user makes room (db/disk-space.ts).
  return commit(
    ctx,
    200,
    async () => {
      const note = await visibleNote(ctx, id);
      // The trash's counts on the workspace's row are written after the note's (triggers): the
      // workspace is locked first, as an append locks it before its stream, so that two instances
      // sharing PostgreSQL never each hold one of the two and wait for the other.
      await writableWorkspace(ctx, { lock: true });
      // To the trash, with its inbox, webhook, alerts and pinned tokens, for a restore; its slot is
      // free at once, its bytes when the purge deletes it (trash.ts).
      await moveToTrash(deps, note.id, deps.clock.now());
      return { id: note.id, deleted: true as const };
    },
    { freesSpace: true },
  );
}
