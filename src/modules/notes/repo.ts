import { and, asc, count, desc, eq, getTableColumns, gt, isNull, like, type SQL } from "drizzle-orm";
import type { Ctx, Deps } from "../../deps";
import { noteChunks, notes } from "../../db/schema";
import { NotFound } from "../../http/errors";
import { selectList } from "../../db/rows";
import { iso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import type { NoteRecord } from "./model";

export type NoteRow = typeof notes.$inferSelect;
/** A note without its body: what lists need. */
export type NoteMeta = Omit<NoteRow, "body" | "richHtml" | "trashedFilename">;

const { body: _body, richHtml: _richHtml, trashedFilename: _tf, ...metaColumns } = getTableColumns(notes);
const NOTE_COLUMNS = selectList(notes);

/** A new note row with every column at its default; callers give what differs. */
export function newNoteRow(
  n: Pick<NoteRow, "workspaceId" | "kind" | "title"> & Partial<NoteRow>,
  now: number,
): NoteRow {
  return {
    id: newId("note"),
    format: "plain",
    filename: null,
    folderId: null,
    body: null,
    richHtml: null,
    byteSize: 0,
    createdAt: now,
    updatedAt: now,
    lastWriteAt: now,
    trashedAt: null,
    trashedFilename: null,
    webhookUrl: null,
    webhookFormat: "generic",
    webhookSecret: null,
    webhookStatus: "none",
    webhookFailures: 0,
    inboxTokenHash: null,
    expectedIntervalSeconds: null,
    alertEmail: null,
    deadmanStatus: "off",
    deadmanDueAt: null,
    ...n,
  };
}

/**
 * A note as the API shows it to this caller. The webhook secret signs what receivers trust, so
 * only callers that may change the webhook (the write scope) see it; others get null, keeping
 * the record's shape.
 */
export function toRecord(ctx: Ctx, row: NoteMeta, plainBody?: string): NoteRecord {
  return {
    id: row.id,
    kind: row.kind,
    format: row.format,
    filename: row.filename,
    title: row.title,
    folder_id: row.folderId,
    byte_size: row.byteSize,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
    last_write_at: iso(row.lastWriteAt),
    webhook_url: row.webhookUrl,
    webhook_format: row.webhookFormat,
    webhook_status: row.webhookStatus,
    webhook_secret: ctx.principal.scopes.has("write") ? row.webhookSecret : null,
    inbox_enabled: row.inboxTokenHash !== null,
    expected_interval_seconds: row.expectedIntervalSeconds,
    alert_email: row.alertEmail,
    deadman_status: row.deadmanStatus,
    ...(plainBody === undefined ? {} : { plain_body: plainBody }),
  };
}

/** A stream's text is its chunks in append order, concatenated exactly. */
export function readBody(deps: Deps, row: NoteRow): string {
  if (row.kind === "editable") return row.body ?? "";
  const chunks = deps.db
    .select({ text: noteChunks.text })
    .from(noteChunks)
    .where(eq(noteChunks.noteId, row.id))
    .orderBy(asc(noteChunks.seq))
    .all();
  return chunks.map((c) => c.text).join("");
}

/** The newest part of a stream: chunks from the end until about `maxChars`, and the last chunk's seq. */
export function streamTail(deps: Deps, noteId: string, maxChars: number): { text: string; lastSeq: number; truncated: boolean } {
  const rows = deps.db.$client
    .query<{ seq: number; text: string }, [string]>("SELECT seq, text FROM note_chunks WHERE note_id = ? ORDER BY seq DESC")
    .iterate(noteId);
  const parts: string[] = [];
  let size = 0;
  let lastSeq = 0;
  let truncated = false;
  for (const r of rows) {
    if (lastSeq === 0) lastSeq = r.seq;
    if (size >= maxChars) {
      truncated = true;
      break;
    }
    parts.push(r.text);
    size += r.text.length;
  }
  return { text: parts.reverse().join(""), lastSeq, truncated };
}

/** A stream's chunks after `afterSeq`, in order, at most `limit`: what a live page has not shown yet. */
export function chunksAfter(deps: Deps, noteId: string, afterSeq: number, limit: number): { seq: number; text: string }[] {
  return deps.db
    .select({ seq: noteChunks.seq, text: noteChunks.text })
    .from(noteChunks)
    .where(and(eq(noteChunks.noteId, noteId), gt(noteChunks.seq, afterSeq)))
    .orderBy(asc(noteChunks.seq))
    .limit(limit)
    .all();
}

/** The workspace's most recently updated notes, trashed ones included, for a note picker. */
export function recentNotes(deps: Deps, workspaceId: string, limit: number) {
  return deps.db
    .select({ id: notes.id, title: notes.title, filename: notes.filename, kind: notes.kind })
    .from(notes)
    .where(eq(notes.workspaceId, workspaceId))
    .orderBy(desc(notes.updatedAt))
    .limit(limit)
    .all();
}

/**
 * The note with this id as the caller may see it: in the caller's workspace and, for a pinned
 * token, the pinned note only. Anything else is the same 404 as a missing note.
 */
export function visibleNote(ctx: Ctx, id: string): NoteRow {
  const { principal } = ctx;
  if (principal.noteId && principal.noteId !== id) throw new NotFound("note");
  const row = ctx.deps.db.$client
    .query<NoteRow, [string, string]>(`SELECT ${NOTE_COLUMNS} FROM notes WHERE id = ? AND workspace_id = ? AND trashed_at IS NULL`)
    .get(id, principal.workspaceId);
  if (!row) throw new NotFound("note");
  return row;
}

/** Every append by filename starts here: a cached prepared statement on the (workspace, filename) index. */
export function findStream(ctx: Ctx, filename: string): NoteRow | undefined {
  const row = ctx.deps.db.$client
    .query<NoteRow, [string, string]>(`SELECT ${NOTE_COLUMNS} FROM notes WHERE workspace_id = ? AND filename = ?`)
    .get(ctx.principal.workspaceId, filename);
  if (row && ctx.principal.noteId && ctx.principal.noteId !== row.id) return undefined;
  return row ?? undefined;
}

export function listNoteRows(
  ctx: Ctx,
  filter: { folderId?: string; kind?: "stream" | "editable"; titleContains?: string },
  page: { limit: number; offset: number },
): { rows: NoteMeta[]; total: number } {
  const conds: SQL[] = [eq(notes.workspaceId, ctx.principal.workspaceId), isNull(notes.trashedAt)];
  if (ctx.principal.noteId) conds.push(eq(notes.id, ctx.principal.noteId));
  if (filter.folderId) conds.push(eq(notes.folderId, filter.folderId));
  if (filter.kind) conds.push(eq(notes.kind, filter.kind));
  if (filter.titleContains) conds.push(like(notes.title, `%${filter.titleContains.replace(/[\\%_]/g, (c) => `\\${c}`)}%`));
  const where = and(...conds);
  const total = ctx.deps.db.select({ n: count() }).from(notes).where(where).get()!.n;
  const rows = ctx.deps.db
    .select(metaColumns)
    .from(notes)
    .where(where)
    .orderBy(desc(notes.updatedAt), desc(notes.id))
    .limit(page.limit)
    .offset(page.offset)
    .all();
  return { rows, total };
}
