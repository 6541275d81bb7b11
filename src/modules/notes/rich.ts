import { eq } from "drizzle-orm";
import { Parser } from "htmlparser2";
import sanitizeHtml from "sanitize-html";
import { commit } from "../../http/commit";
import type { Reply } from "../../http/reply";
import type { Ctx } from "../../deps";
import { notes } from "../../db/tables";
import { CapExceeded, NoteLocked, ValidationFailed, type FieldProblem } from "../../http/errors";
import { byteLength, stripControl, titleProblem } from "../../lib/text";
import { assertFolderInWorkspace } from "../folders/repo";
import { captureBeforeSave } from "../snapshots/capture";
import { requireScope, requireUnpinned } from "../tokens/service";
import { assertNoteSlots, assertStorage } from "../workspaces/caps";
import { addStorage, tierOf } from "../workspaces/repo";
import type { NoteRecord } from "./model";
import { newNoteRow, toRecord, visibleNote, type NoteRow } from "./repo";
import { DEFAULT_TITLE, writableWorkspace } from "./service";

/** What a rich note may contain: text formatting, lists, quotes, code and links, nothing active. */
const SANITIZE: sanitizeHtml.IOptions = {
  allowedTags: ["p", "br", "div", "strong", "b", "em", "i", "u", "s", "strike", "h1", "h2", "h3", "ul", "ol", "li", "blockquote", "code", "pre", "a", "hr"],
  allowedAttributes: { a: ["href", "title"] },
  allowedSchemes: ["http", "https", "mailto"],
  transformTags: { a: sanitizeHtml.simpleTransform("a", { rel: "noopener noreferrer nofollow" }) },
  disallowedTagsMode: "discard",
};

/**
 * The HTML a rich note keeps. U+0000 goes first, as HTML parsers drop it from a page (a browser's
 * editor never sends it; a crafted post may): PostgreSQL's text cannot hold it, and a 500 there for
 * what SQLite stored is the one answer a save must never get.
 */
export function sanitizeRich(html: string): string {
  return sanitizeHtml(html.replaceAll("\u0000", ""), SANITIZE);
}

const BLOCKS = new Set(["p", "div", "h1", "h2", "h3", "ul", "ol", "li", "blockquote", "pre", "hr"]);

/** The plain-text projection the API reads: blocks on their own lines, list items with a dash. */
export function plainProjection(safeHtml: string): string {
  let out = "";
  const newline = () => {
    if (out && !out.endsWith("\n")) out += "\n";
  };
  const parser = new Parser(
    {
      onopentag(name) {
        if (name === "br") out += "\n";
        else if (BLOCKS.has(name)) newline();
        if (name === "li") out += "- ";
      },
      ontext(text) {
        out += text;
      },
      onclosetag(name) {
        if (BLOCKS.has(name)) newline();
      },
    },
    { decodeEntities: true },
  );
  parser.write(safeHtml);
  parser.end();
  return out.replace(/\n{3,}/g, "\n\n").trim() + (out.trim() ? "\n" : "");
}

async function checkSizes(ctx: Ctx, safeHtml: string, plain: string, currentSize: number) {
  const tier = tierOf(ctx.deps, await writableWorkspace(ctx));
  const plainBytes = byteLength(plain);
  if (tier.richHtml !== null && byteLength(safeHtml) > tier.richHtml) {
    throw new CapExceeded("note_size", tier.richHtml, byteLength(safeHtml), `a rich note's HTML may be at most ${tier.richHtml} bytes on the ${tier.name} plan`);
  }
  if (tier.richPlain !== null && plainBytes > tier.richPlain && plainBytes > currentSize) {
    throw new CapExceeded("note_size", tier.richPlain, currentSize, `a rich note's text may be at most ${tier.richPlain} bytes on the ${tier.name} plan`);
  }
  return { tier, plainBytes };
}

function cleanTitle(raw: string | undefined): string {
  const title = raw === undefined || raw.trim() === "" ? DEFAULT_TITLE : stripControl(raw);
  const problem = titleProblem(title);
  if (problem) throw new ValidationFailed([{ field: "title", code: "too_long", message: problem } satisfies FieldProblem]);
  return title;
}

/** Rich notes are made in the browser only; the API can read their plain projection. */
export async function createRichNote({ ctx, title, html, folderId }: { ctx: Ctx; title?: string; html: string; folderId?: string | null }): Promise<Reply<NoteRecord>> {
  requireScope(ctx, "write");
  requireUnpinned(ctx, "create notes");
  const safe = sanitizeRich(html);
  const plain = plainProjection(safe);
  const cleanedTitle = cleanTitle(title);
  const { deps } = ctx;
  return commit(ctx, 201, async () => {
    const ws = await writableWorkspace(ctx);
    await assertFolderInWorkspace(deps, ws.id, folderId, "folder_id");
    const { tier, plainBytes } = await checkSizes(ctx, safe, plain, 0);
    await assertNoteSlots(deps, ws, tier, "rich");
    assertStorage(ws, tier, plainBytes);
    const row = newNoteRow({ workspaceId: ws.id, kind: "editable", format: "rich", title: cleanedTitle, body: plain, richHtml: safe, byteSize: plainBytes, folderId: folderId ?? null }, deps.clock.now());
    await deps.db.insert(notes).values(row);
    await addStorage(deps, ws.id, plainBytes);
    return toRecord(ctx, row, plain);
  });
}

export async function updateRichNote({ ctx, id, title, html }: { ctx: Ctx; id: string; title?: string; html?: string }): Promise<Reply<NoteRecord>> {
  requireScope(ctx, "write");
  const { deps } = ctx;
  const safe = html === undefined ? undefined : sanitizeRich(html);
  return commit(ctx, 200, async () => {
    const note = await visibleNote(ctx, id);
    if (note.format !== "rich") throw new NoteLocked("this note is plain text; edit its plain_body instead");
    const next: NoteRow = { ...note };
    if (title !== undefined) next.title = cleanTitle(title);
    let delta = 0;
    if (safe !== undefined) {
      const plain = plainProjection(safe);
      const { tier, plainBytes } = await checkSizes(ctx, safe, plain, note.byteSize);
      delta = plainBytes - note.byteSize;
      assertStorage(await writableWorkspace(ctx), tier, delta);
      Object.assign(next, { richHtml: safe, body: plain, byteSize: plainBytes });
    }
    const now = deps.clock.now();
    if (next.title !== note.title || next.richHtml !== note.richHtml) {
      await captureBeforeSave(deps, note, now);
      next.updatedAt = now;
      next.lastWriteAt = now;
      const { id: _id, ...columns } = next;
      await deps.db.update(notes).set(columns).where(eq(notes.id, note.id));
      await addStorage(deps, note.workspaceId, delta);
    }
    return toRecord(ctx, next, next.body ?? "");
  });
}
