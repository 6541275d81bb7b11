import type { Ctx } from "../../deps";
import { iso } from "../../lib/clock";
import type { Page } from "../../lib/pagination";
import { assertFolderIdWellFormed } from "../folders/repo";
import { requireScope } from "../tokens/service";
import type { SearchHit, SnippetPart } from "./model";
import { CLOSE, OPEN, Source, type HitRow, type SearchIndex } from "./engine";
import { searchIndex } from "./repo";
import { searchWords } from "./terms";

/**
 * Full-text search of the notes the caller sees (a pinned token: its note only), best match
 * first (bm25 on SQLite, ts_rank on PostgreSQL) among the newest matches (SEARCH_CANDIDATES of
 * each kind, engine.ts), each note once with the passage that matched best. The same verb serves
 * GET /search, the search page and MCP's list_notes with a query.
 */
export async function searchNotes({
  ctx,
  q,
  folderId,
  page,
}: {
  ctx: Ctx;
  q: string | undefined;
  folderId?: string;
  page: Page;
}): Promise<{ items: SearchHit[]; total: number }> {
  requireScope(ctx, "read");
  const words = searchWords(q);
  if (folderId !== undefined) assertFolderIdWellFormed(folderId, "folder_id");
  const { workspaceId, noteId } = ctx.principal;
  const index = searchIndex(ctx.deps.store);
  const match = index.match(words, workspaceId);
  const { rows, total } = await index.hits(ctx.deps, match, { workspaceId, noteId, folderId: folderId ?? null }, page);
  const items: SearchHit[] = [];
  for (const r of rows) items.push(toHit(r, await snippetOf(ctx, index, r, match)));
  return { items, total };
}

async function snippetOf(ctx: Ctx, index: SearchIndex, r: HitRow, match: unknown): Promise<string> {
  if (r.src === Source.Chunk) {
    const s = await index.chunkSnippet(ctx.deps, match, r);
    if (s.includes(OPEN)) return s;
  } else {
    const { title, body } = await index.noteSnippets(ctx.deps, match, r);
    // The body says more than the title, which the hit carries anyway.
    if (body.includes(OPEN)) return body;
    if (title.includes(OPEN)) return title;
  }
  return r.title;
}

/** A marked snippet as parts: text between the marks matched, the rest did not; adjacent parts of a kind joined. */
export function snippetParts(marked: string): SnippetPart[] {
  const parts: SnippetPart[] = [];
  const push = (text: string, match: boolean) => {
    if (text === "") return;
    const last = parts[parts.length - 1];
    if (last && last.match === match) last.text += text;
    else parts.push({ text, match });
  };
  let rest = marked.trim();
  while (rest !== "") {
    const open = rest.indexOf(OPEN);
    if (open < 0) {
      push(rest, false);
      break;
    }
    push(rest.slice(0, open), false);
    const close = rest.indexOf(CLOSE, open + 1);
    const end = close < 0 ? rest.length : close;
    push(rest.slice(open + 1, end), true);
    rest = close < 0 ? "" : rest.slice(close + 1);
  }
  return parts.map((p) => ({ text: p.text.replaceAll(OPEN, "").replaceAll(CLOSE, ""), match: p.match }));
}

function toHit(r: HitRow, marked: string): SearchHit {
  const parts = snippetParts(marked);
  return {
    id: r.id,
    kind: r.kind,
    format: r.format,
    filename: r.filename,
    title: r.title,
    folder_id: r.folderId,
    byte_size: r.byteSize,
    updated_at: iso(r.updatedAt),
    snippet: parts.map((p) => (p.match ? `**${p.text}**` : p.text)).join(""),
    snippet_parts: parts,
  };
}
