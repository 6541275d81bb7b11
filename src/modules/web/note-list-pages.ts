import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { html, page } from "../../web/html";
import { back, bytes, csrfField, flashFrom, layout, redirect, when } from "../../web/layout";
import { pageMacros } from "../../web/macros";
import type { WebSession } from "../../web/session";
import * as folderService from "../folders/service";
import { listTrash, restoreNote, TRASH_DAYS } from "../notes/trash";
import * as noteService from "../notes/service";
import { board, boardJson, boardView, pageNumber } from "./board";
import { textFields } from "./form";
import { sidebar } from "./note-parts";

const PAGE_SIZE = 25;

/** The notes list: a status board of the streams beside the editable notes (src/modules/web/board.ts). */
async function listPage(deps: Deps, s: WebSession, url: URL): Promise<Response> {
  const view = boardView(url);
  const { folder, q } = view;
  const b = await board(deps, s, view);
  return page(
    layout({
      title: "Notes",
      session: s,
      active: "notes",
      flash: flashFrom(url),
      body: html`<div class="shell">${await sidebar(deps, s, folder)}<div>
  ${b.heading}
  <div class="row spread mb14">
    <form method="get" action="/search" class="row grow">${folder ? html`<input type="hidden" name="folder" value="${folder}">` : ""}<input type="search" name="q" value="${q}" placeholder="Search titles and text" aria-label="Search titles and text"><button>Search</button></form>
    <div class="row"><a class="button primary" href="/notes/new${folder ? `?folder=${encodeURIComponent(folder)}` : ""}">New note</a><a class="button" href="/notes/new?format=rich${folder ? `&folder=${encodeURIComponent(folder)}` : ""}">New rich note</a></div>
  </div>
  ${b.filters}
  ${b.list}
  ${b.pager}
</div></div>`,
    }),
  );
}

async function trashPage(deps: Deps, s: WebSession, url: URL): Promise<Response> {
  const pageNo = pageNumber(url.searchParams.get("page"));
  const { items, total } = await listTrash({ ctx: s.ctx, page: { limit: PAGE_SIZE, offset: (pageNo - 1) * PAGE_SIZE } });
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  const link = (p: number) => `/trash?page=${p}`;
  return page(
    layout({
      title: "Trash",
      session: s,
      active: "notes",
      flash: flashFrom(url),
      body: html`<div class="shell">${await sidebar(deps, s, "trash")}<div>
  <div class="card">
  <h1>Trash</h1>
  <p class="muted small">Deleted notes (and notes over the free plan's cap after a trial) stay here for ${TRASH_DAYS} days, still counted in your storage, then they are deleted for good. A restored stream keeps its inbox URL, webhook, alerts and the tokens pinned to it.</p>
  ${
    items.length === 0
      ? html`<p class="muted">The trash is empty.</p>`
      : html`<table><tr><th>Note</th><th>Size</th><th>Deleted</th><th>Deleted for good</th><th></th></tr>${items.map(
          (n) => html`<tr><td><strong>${n.title}</strong> <span class="muted small">${n.kind === "stream" ? n.filename : "editable"}</span></td><td>${bytes(n.byte_size)}</td><td>${when(n.trashed_at)}</td><td>${when(n.purge_at)}</td><td><form method="post" action="/trash/${n.id}/restore">${csrfField(s)}<button>Restore</button></form></td></tr>`,
        )}</table>`
  }
  </div>
  ${pages > 1 ? html`<nav class="pager">${pageNo > 1 ? html`<a href="${link(pageNo - 1)}">← Newer</a>` : ""}<span class="muted">Page ${pageNo} of ${pages} · ${total} notes</span>${pageNo < pages ? html`<a href="${link(pageNo + 1)}">Older →</a>` : ""}</nav>` : ""}
</div></div>`,
    }),
  );
}

/** The note list with its folder sidebar, and the forms on it: a new note, a new, renamed or deleted folder; the trash. */
export const noteListPages = (deps: Deps) =>
  new Elysia()
    .use(pageMacros(deps))
    .get("/notes", ({ s, request }) => listPage(deps, s, new URL(request.url)), { session: "page" })
    .get("/notes/board.json", ({ s, request }) => boardJson(deps, s, new URL(request.url)), { session: "script" })
    .get("/trash", ({ s, request }) => trashPage(deps, s, new URL(request.url)), { session: "page" })
    .post(
      "/trash/:id/restore",
      async ({ s, params }) => {
        const { body: note } = await restoreNote({ ctx: s.ctx, id: params.id });
        const renamed = note.kind === "stream" && note.filename === null;
        return back(`/notes/${note.id}`, "ok", renamed ? "Restored. Another stream took its filename meanwhile, so it is reachable by its page and id only." : "Restored from the trash.");
      },
      { session: "form", refused: "/trash" },
    )
    .post(
      "/notes/new",
      async ({ s, body }) => {
        const b = textFields(body);
        const folderId = b.folder_id || null;
        const r =
          b.format === "rich"
            ? await (await import("../notes/rich")).createRichNote({ ctx: s.ctx, title: "Untitled", html: "<p></p>", folderId })
            : await noteService.createNote({ ctx: s.ctx, input: { title: "Untitled", plain_body: "", folder_id: folderId } });
        return redirect(`/notes/${r.body.id}`);
      },
      { session: "form", refused: "/notes" },
    )
    .post(
      "/folders",
      async ({ s, body }) => {
        const r = await folderService.createFolder({ ctx: s.ctx, name: textFields(body).name ?? "" });
        return redirect(`/notes?folder=${r.body.id}`);
      },
      { session: "form", refused: "/notes" },
    )
    .post(
      "/folders/:id/rename",
      async ({ s, params, body }) => {
        await folderService.renameFolder({ ctx: s.ctx, id: params.id, name: textFields(body).name ?? "" });
        return back(`/notes?folder=${params.id}`, "ok", "Folder renamed.");
      },
      { session: "form", refused: "/notes?folder=:id" },
    )
    .post(
      "/folders/:id/delete",
      async ({ s, params }) => {
        await folderService.deleteFolder({ ctx: s.ctx, id: params.id });
        return back("/notes", "ok", "Folder deleted; its notes are unfiled.");
      },
      { session: "form", refused: "/notes?folder=:id" },
    );
