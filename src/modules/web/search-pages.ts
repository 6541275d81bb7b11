import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { AppError } from "../../http/errors";
import { html, page, type Html } from "../../web/html";
import { flashFrom, layout, when } from "../../web/layout";
import { pageMacros } from "../../web/macros";
import type { WebSession } from "../../web/session";
import { folderNames } from "../folders/repo";
import type { SearchHit } from "../search/model";
import { searchNotes } from "../search/service";
import { MAX_QUERY_CHARS } from "../search/terms";
import { sidebar } from "./note-parts";

const PAGE_SIZE = 25;
/** Pages past this are a typo or a probe (the API stops at offset 1,000,000 as well). */
const MAX_PAGE = 40_000;

/** ?page= as our own links write it: digits only; anything else is the first page. */
function pageNumber(raw: string | null): number {
  if (!raw || !/^[1-9][0-9]{0,4}$/.test(raw)) return 1;
  const n = Number(raw);
  return n <= MAX_PAGE ? n : 1;
}

/**
 * The snippet with its matches in <mark>: built from the service's parts, each text escaped by
 * html``, so nothing of a note ever reaches the page as markup.
 */
function snippet(hit: SearchHit): Html {
  return html`<p class="snippet">${hit.snippet_parts.map((p) => (p.match ? html`<mark>${p.text}</mark>` : p.text))}</p>`;
}

function searchForm(q: string, folder: { id: string; name: string } | null, problem: string | null): Html {
  return html`<form method="get" action="/search" class="search-form" role="search">${folder ? html`<input type="hidden" name="folder" value="${folder.id}">` : ""}
  <label for="search-q" class="sr-only">Search titles and text</label>
  <div class="row"><input type="search" id="search-q" name="q" value="${q}" maxlength="${MAX_QUERY_CHARS}" placeholder="Words to find" ${problem ? html`aria-invalid="true" aria-describedby="search-q-problem"` : ""}><button class="primary">Search</button></div>
  ${problem ? html`<p class="search-problem" id="search-q-problem" role="alert">${problem}</p>` : ""}
  ${folder ? html`<p class="small muted">In the folder ${folder.name} only · <a href="/search?${new URLSearchParams({ q }).toString()}">search every note</a></p>` : ""}
</form>`;
}

async function results(s: WebSession, q: string, folder: string | null, folders: Map<string, string>, pageNo: number): Promise<{ body: Html; problem: string | null }> {
  let found: { items: SearchHit[]; total: number };
  try {
    found = await searchNotes({ ctx: s.ctx, q, folderId: folder ?? undefined, page: { limit: PAGE_SIZE, offset: (pageNo - 1) * PAGE_SIZE } });
  } catch (e) {
    // What was typed is refused (too long, no word in it): the form says why, beside the field.
    if (e instanceof AppError && e.status === 400) {
      const detail = (e.details as { message?: string }[] | undefined)?.[0]?.message;
      return { body: html``, problem: detail ? `The search ${detail}.` : e.message };
    }
    throw e;
  }
  const { items, total } = found;
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  const link = (p: number) => `/search?${new URLSearchParams({ q, ...(folder ? { folder } : {}), page: String(p) })}`;
  const body = html`<p class="muted small" role="status">${total === 0 ? "No note has all of these words." : `${total} ${total === 1 ? "note matches" : "notes match"}, best match first.`}</p>
  ${
    items.length === 0
      ? ""
      : html`<ol class="notes hits">${items.map(
          (n) => html`<li><a href="/notes/${n.id}"><strong>${n.title}</strong><span class="meta">${when(n.updated_at)}</span><span class="meta">${n.kind === "stream" ? n.filename ?? "stream" : n.format === "rich" ? "rich text" : "editable"}${
            n.folder_id && folders.has(n.folder_id) ? ` · ${folders.get(n.folder_id)}` : ""
          }</span>${snippet(n)}</a></li>`,
        )}</ol>`
  }
  ${pages > 1 ? html`<nav class="pager" aria-label="Result pages">${pageNo > 1 ? html`<a href="${link(pageNo - 1)}">← Better matches</a>` : ""}<span class="muted">Page ${pageNo} of ${pages}</span>${pageNo < pages ? html`<a href="${link(pageNo + 1)}">More →</a>` : ""}</nav>` : ""}`;
  return { body, problem: null };
}

async function searchPage(deps: Deps, s: WebSession, url: URL): Promise<Response> {
  const q = url.searchParams.get("q") ?? "";
  const asked = url.searchParams.has("q");
  const folders = new Map((await folderNames(deps, s.workspaceId)).map((f) => [f.id, f.name]));
  // The notes list's box sends its folder along; one that is not this workspace's is no filter.
  const folderId = url.searchParams.get("folder");
  const folder = folderId && folders.has(folderId) ? { id: folderId, name: folders.get(folderId)! } : null;
  const { body, problem } = asked ? await results(s, q, folder?.id ?? null, folders, pageNumber(url.searchParams.get("page"))) : { body: html``, problem: null };
  return page(
    layout({
      title: q.trim() ? `Search: ${q.trim()}` : "Search",
      session: s,
      active: "notes",
      flash: flashFrom(url),
      body: html`<div class="shell">${await sidebar(deps, s, folder?.id ?? "search")}<div>
  <div class="card">
  <h1>Search</h1>
  ${searchForm(q, folder, problem)}
  ${asked ? body : html`<p class="muted small">Finds notes with every word you type, in their titles and text (streams' lines, editable notes' bodies): whole words, without regard to case or accents. Deleted notes are not searched.</p>`}
  </div>
</div></div>`,
    }),
  );
}

/** The search page: full-text search of the workspace's notes, as GET /api/v1/search. */
export const searchPages = (deps: Deps) =>
  new Elysia().use(pageMacros(deps)).get("/search", ({ s, request }) => searchPage(deps, s, new URL(request.url)), { session: "page" });
