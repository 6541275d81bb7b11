import { sql } from "drizzle-orm";
import type { Ctx, Deps } from "../../deps";
import { noteChunks } from "../../db/tables";
import { sqlRows } from "../../db/sql";
import { ValidationFailed } from "../../http/errors";
import { iso } from "../../lib/clock";
import { parseCount } from "../../lib/pagination";
import { visibleNote, visibleStream, type NoteRow } from "../notes/repo";
import { requireScope } from "../tokens/service";
import type { LinesPage, LinesQuery, StreamLine } from "./model";

export const DEFAULT_LINES = 100;
export const MAX_LINES = 1000;

/** A line's place in its stream: line `line` (from 0) of the chunk whose rowid is `seq`. */
export interface Position {
  seq: number;
  line: number;
}

/** Before every line (no chunk has rowid 0): an empty stream's cursor, which reads whatever comes first. */
const START: Position = { seq: 0, line: 0 };

const CURSOR = /^[A-Za-z0-9_-]{1,40}$/;
const POSITION = /^(0|[1-9][0-9]{0,14})\.(0|[1-9][0-9]{0,8})$/;

/** Opaque to clients, so its form may change; today base64url of "<seq>.<line>". */
export function cursorOf(p: Position): string {
  return Buffer.from(`${p.seq}.${p.line}`).toString("base64url");
}

/** The position a cursor names; anything this service did not hand out is 422 naming `field`. */
export function positionOf(raw: string, field: string): Position {
  const m = CURSOR.test(raw) ? POSITION.exec(Buffer.from(raw, "base64url").toString("latin1")) : null;
  const p = m && { seq: Number(m[1]), line: Number(m[2]) };
  // Base64 decoding forgives stray bits and padding; only the canonical spelling is a cursor.
  if (!p || cursorOf(p) !== raw) throw ValidationFailed.field(field, "invalid", "is not a cursor given out by this service (a line's, a page's or an event's id)");
  return p;
}

export interface Lines {
  lines: StreamLine[];
  /** Where the last line returned is; null when none was. */
  next: Position | null;
}

interface ChunkRow {
  seq: number;
  text: string;
  at: number;
}

/** A chunk holds one or more whole lines, each ending in LF. */
function splitLines(text: string): string[] {
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

const lineAt = (c: ChunkRow, text: string, line: number): StreamLine => ({ text, at: iso(c.at), cursor: cursorOf({ seq: c.seq, line }) });

/** The first page of chunks a reader asks for; each further page is twice the last, so one that stops early reads little. */
const FIRST_PAGE = 8;

/**
 * Up to `limit` of the stream's chunks past `from` (newer than it reading "asc", older reading
 * "desc"; null: from the start or the end), in that order, from the (note_id, seq) index.
 *
 * A sql template rather than the query builder: every follower of a stream reads its new lines
 * after each commit, and the builder's own work made each of those reads markedly slower. The SQL
 * is the subset both databases share.
 */
async function chunkPage(deps: Deps, noteId: string, order: "asc" | "desc", from: number | null, limit: number): Promise<ChunkRow[]> {
  const c = noteChunks;
  const past = from === null ? sql`` : order === "asc" ? sql` AND ${c.seq} > ${from}` : sql` AND ${c.seq} < ${from}`;
  const rows = await sqlRows<ChunkRow>(
    deps.store,
    sql`SELECT ${c.seq} AS seq, ${c.text} AS text, ${c.at} AS at FROM ${c} WHERE ${c.noteId} = ${noteId}${past}
        ORDER BY ${c.seq} ${order === "asc" ? sql`ASC` : sql`DESC`} LIMIT ${limit}`,
  );
  // Raw rows are the driver's own: a 64-bit integer may come as a string.
  for (const r of rows) {
    r.seq = Number(r.seq);
    r.at = Number(r.at);
  }
  return rows;
}

/**
 * The newest `count` lines, oldest first: chunks are read newest first (note_chunks_note index)
 * and only until they hold enough lines, so the cost does not grow with the stream. Every chunk
 * holds a line at least, so `count` chunks are the most it can need.
 */
export async function lastLines(deps: Deps, noteId: string, count: number): Promise<Lines> {
  const picked: { c: ChunkRow; lines: string[] }[] = [];
  let n = 0;
  let before: number | null = null;
  for (let size = FIRST_PAGE; n < count; size *= 2) {
    const limit = Math.min(size, count - n);
    const page = await chunkPage(deps, noteId, "desc", before, limit);
    for (const c of page) {
      const lines = splitLines(c.text);
      picked.push({ c, lines });
      n += lines.length;
      before = c.seq;
      if (n >= count) break;
    }
    if (page.length < limit) break;
  }
  const out: StreamLine[] = [];
  let next: Position | null = null;
  // Only the oldest chunk read may hold more lines than are asked for.
  let skip = Math.max(0, n - count);
  for (let k = picked.length - 1; k >= 0; k--) {
    const { c, lines } = picked[k]!;
    for (let i = skip; i < lines.length; i++) out.push(lineAt(c, lines[i]!, i));
    if (lines.length > skip) next = { seq: c.seq, line: lines.length - 1 };
    skip = 0;
  }
  return { lines: out, next };
}

/**
 * The newest lines of whole chunks holding about `maxChars` of text, oldest first, with their
 * times (the stream's page): bounded by size, not by count, so a stream of huge lines costs no
 * more than one of short ones. `truncated` when older chunks were left out.
 */
export async function newestLines(deps: Deps, noteId: string, maxChars: number): Promise<{ lines: StreamLine[]; truncated: boolean }> {
  const picked: ChunkRow[] = [];
  let size = 0;
  let truncated = false;
  let before: number | null = null;
  read: for (let pageSize = FIRST_PAGE; ; pageSize *= 2) {
    const page = await chunkPage(deps, noteId, "desc", before, pageSize);
    for (const c of page) {
      if (size >= maxChars) {
        truncated = true;
        break read;
      }
      picked.push(c);
      size += c.text.length;
      before = c.seq;
    }
    if (page.length < pageSize) break;
  }
  const lines: StreamLine[] = [];
  for (let k = picked.length - 1; k >= 0; k--) splitLines(picked[k]!.text).forEach((text, i) => lines.push(lineAt(picked[k]!, text, i)));
  return { lines, truncated };
}

/** The lines after `after`, oldest first, at most `count`: chunks from the cursor's on. */
export async function linesAfter(deps: Deps, noteId: string, after: Position, count: number): Promise<Lines> {
  // Nothing at or after the cursor's chunk: that chunk is gone (retention drops whole chunks,
  // oldest first), so every line left is newer than the cursor. Read from the oldest.
  return (await collectAfter(deps, noteId, after, count)) ?? (await collectAfter(deps, noteId, START, count)) ?? { lines: [], next: null };
}

/** Null when the stream has no chunk at or after the cursor's. */
async function collectAfter(deps: Deps, noteId: string, after: Position, count: number): Promise<Lines | null> {
  const out: StreamLine[] = [];
  let next: Position | null = null;
  let found = false;
  // From the cursor's own chunk on (seq > after.seq - 1); each chunk holds a line at least, so
  // count + 1 chunks are the most it can need.
  let from = after.seq - 1;
  for (let size = FIRST_PAGE; out.length < count; size *= 2) {
    const limit = Math.min(size, count - out.length + 1);
    const page = await chunkPage(deps, noteId, "asc", from, limit);
    for (const c of page) {
      found = true;
      from = c.seq;
      const lines = splitLines(c.text);
      for (let i = c.seq === after.seq ? after.line + 1 : 0; i < lines.length && out.length < count; i++) {
        out.push(lineAt(c, lines[i]!, i));
        next = { seq: c.seq, line: i };
      }
      if (out.length >= count) break;
    }
    if (page.length < limit) break;
  }
  return found ? { lines: out, next } : null;
}

/** Where a follower with no cursor starts: after the stream's current last line. */
export async function endOf(deps: Deps, noteId: string): Promise<Position> {
  return (await lastLines(deps, noteId, 1)).next ?? START;
}

/** The stream as this caller may read it (read scope, the pin); an editable note has no lines. */
export async function readableStream(ctx: Ctx, by: { id: string } | { filename: string }): Promise<NoteRow> {
  requireScope(ctx, "read");
  const note = "id" in by ? await visibleNote(ctx, by.id) : await visibleStream(ctx, by.filename);
  if (note.kind !== "stream") {
    throw ValidationFailed.field("id", "not_a_stream", "lines are read from streams; an editable note's text is its plain_body (GET /notes/{id})");
  }
  return note;
}

/** What a lines query asks for: the newest `last` lines, or up to `limit` lines after a cursor. */
export type LinesRead = { last: number } | { after: Position; cursor: string; limit: number };

export function linesRead(query: LinesQuery): LinesRead {
  if (query.cursor === undefined) {
    if (query.limit !== undefined) throw ValidationFailed.field("limit", "invalid", "goes with cursor; the newest lines are read with last");
    return { last: count(query.last, "last") };
  }
  if (query.last !== undefined) throw ValidationFailed.field("last", "invalid", "does not go with cursor: last reads the newest lines, cursor the lines after it");
  return { after: positionOf(query.cursor, "cursor"), cursor: query.cursor, limit: count(query.limit, "limit") };
}

function count(raw: string | undefined, field: string): number {
  const n = parseCount(raw, field, DEFAULT_LINES, MAX_LINES);
  if (typeof n !== "number") throw new ValidationFailed([n]);
  return n;
}

/** GET …/lines: a page of lines and the cursor to continue from. */
export async function readLines(deps: Deps, note: NoteRow, read: LinesRead): Promise<LinesPage> {
  if ("last" in read) {
    const { lines, next } = await lastLines(deps, note.id, read.last);
    return { lines, cursor: cursorOf(next ?? START) };
  }
  const { lines, next } = await linesAfter(deps, note.id, read.after, read.limit);
  return { lines, cursor: next ? cursorOf(next) : read.cursor };
}
