import type { Ctx, Deps } from "../../deps";
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

/**
 * The newest `count` lines, oldest first: chunks are read newest first (note_chunks_note index)
 * and only until they hold enough lines, so the cost does not grow with the stream.
 */
export function lastLines(deps: Deps, noteId: string, count: number): Lines {
  const newestFirst = deps.db.$client.query<ChunkRow, [string]>("SELECT seq, text, at FROM note_chunks WHERE note_id = ? ORDER BY seq DESC");
  const picked: { c: ChunkRow; lines: string[] }[] = [];
  let n = 0;
  for (const c of newestFirst.iterate(noteId)) {
    const lines = splitLines(c.text);
    picked.push({ c, lines });
    n += lines.length;
    if (n >= count) break;
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
export function newestLines(deps: Deps, noteId: string, maxChars: number): { lines: StreamLine[]; truncated: boolean } {
  const newestFirst = deps.db.$client.query<ChunkRow, [string]>("SELECT seq, text, at FROM note_chunks WHERE note_id = ? ORDER BY seq DESC");
  const picked: ChunkRow[] = [];
  let size = 0;
  let truncated = false;
  for (const c of newestFirst.iterate(noteId)) {
    if (size >= maxChars) {
      truncated = true;
      break;
    }
    picked.push(c);
    size += c.text.length;
  }
  const lines: StreamLine[] = [];
  for (let k = picked.length - 1; k >= 0; k--) splitLines(picked[k]!.text).forEach((text, i) => lines.push(lineAt(picked[k]!, text, i)));
  return { lines, truncated };
}

/** The lines after `after`, oldest first, at most `count`: chunks from the cursor's on. */
export function linesAfter(deps: Deps, noteId: string, after: Position, count: number): Lines {
  // Nothing at or after the cursor's chunk: that chunk is gone (retention drops whole chunks,
  // oldest first), so every line left is newer than the cursor. Read from the oldest.
  return collectAfter(deps, noteId, after, count) ?? collectAfter(deps, noteId, START, count) ?? { lines: [], next: null };
}

function collectAfter(deps: Deps, noteId: string, after: Position, count: number): Lines | null {
  const fromSeq = deps.db.$client.query<ChunkRow, [string, number]>("SELECT seq, text, at FROM note_chunks WHERE note_id = ? AND seq >= ? ORDER BY seq");
  const out: StreamLine[] = [];
  let next: Position | null = null;
  let found = false;
  for (const c of fromSeq.iterate(noteId, after.seq)) {
    found = true;
    const lines = splitLines(c.text);
    for (let i = c.seq === after.seq ? after.line + 1 : 0; i < lines.length && out.length < count; i++) {
      out.push(lineAt(c, lines[i]!, i));
      next = { seq: c.seq, line: i };
    }
    if (out.length >= count) break;
  }
  return found ? { lines: out, next } : null;
}

/** Where a follower with no cursor starts: after the stream's current last line. */
export function endOf(deps: Deps, noteId: string): Position {
  return lastLines(deps, noteId, 1).next ?? START;
}

/** The stream as this caller may read it (read scope, the pin); an editable note has no lines. */
export function readableStream(ctx: Ctx, by: { id: string } | { filename: string }): NoteRow {
  requireScope(ctx, "read");
  const note = "id" in by ? visibleNote(ctx, by.id) : visibleStream(ctx, by.filename);
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
export function readLines(deps: Deps, note: NoteRow, read: LinesRead): LinesPage {
  if ("last" in read) {
    const { lines, next } = lastLines(deps, note.id, read.last);
    return { lines, cursor: cursorOf(next ?? START) };
  }
  const { lines, next } = linesAfter(deps, note.id, read.after, read.limit);
  return { lines, cursor: next ? cursorOf(next) : read.cursor };
}
