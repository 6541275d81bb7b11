import { Elysia, t } from "elysia";
import { TypeCompiler, ValueErrorType } from "@sinclair/typebox/compiler";
import { and, asc, count, desc, eq, gt, isNull, like, type SQL } from "drizzle-orm";
import type { Deps } from "../../deps";
import { folders, noteChunks, notes } from "../../db/schema";
import { AppError, errorResponse, ValidationFailed, type FieldProblem } from "../../http/errors";
import { iso } from "../../lib/clock";
import { TITLE_MAX_CHARS } from "../../lib/text";
import { bodyCaps } from "../../limits/plans";
import * as folderService from "../folders/service";
import { readBody, visibleNote, type NoteRow } from "../notes/repo";
import * as noteService from "../notes/service";
import { listSnapshots, restoreSnapshot } from "../snapshots/service";
import { errorMessage, formAction, limit, requireForm, requireSession } from "./guard";
import { html, page, raw, type Html } from "./html";
import { back, bytes, csrfField, flashFrom, layout, redirect, when } from "./layout";
import type { WebSession } from "./session";

type Body = Record<string, string | undefined>;
const PAGE_SIZE = 25;
/** How much of a long stream the page shows; the rest is a download away. */
const TAIL_BYTES = 128 * 1024;
/** 2.5 million notes' worth of pages; a larger number is a typo or a probe. */
const MAX_PAGE = 100_000;

/**
 * ?page= as written by our own links: digits only. Number() would also take "1e400" (Infinity,
 * an OFFSET SQLite refuses), "0x10" and "2.5"; anything but a page number shows the first page.
 */
function pageNumber(raw: string | null): number {
  if (!raw || !/^[1-9][0-9]{0,5}$/.test(raw)) return 1;
  const n = Number(raw);
  return n <= MAX_PAGE ? n : 1;
}

/**
 * What a save may send: form fields or the editor's JSON, strings only. The lengths bound the
 * fields by what could arrive at all (a title's 200 characters are up to 400 UTF-16 units); the
 * plan's note-size caps are the note service's to check.
 */
function saveBodyChecker(deps: Deps) {
  const text = { maxLength: bodyCaps(deps.config.limitProfile).browser };
  return TypeCompiler.Compile(
    t.Object({
      _csrf: t.Optional(t.String({ maxLength: 64 })),
      title: t.Optional(t.String({ maxLength: 2 * TITLE_MAX_CHARS })),
      plain_body: t.Optional(t.String(text)),
      html: t.Optional(t.String(text)),
    }),
  );
}

function saveBodyProblems(checker: ReturnType<typeof saveBodyChecker>, body: unknown): ValidationFailed {
  const byField = new Map<string, FieldProblem>();
  for (const e of checker.Errors(body)) {
    const field = e.path.split("/")[1] || "body";
    if (byField.has(field)) continue;
    const code = e.type === ValueErrorType.StringMaxLength ? "too_long" : "invalid_type";
    byField.set(field, { field, code, message: code === "too_long" ? "is too long" : field === "body" ? "expected an object of fields" : "expected a string" });
  }
  return new ValidationFailed([...byField.values()]);
}


function sidebar(deps: Deps, s: WebSession, activeFolder: string | null): Html {
  const rows = deps.db
    .select({ id: folders.id, name: folders.name, n: count(notes.id) })
    .from(folders)
    .leftJoin(notes, and(eq(notes.folderId, folders.id), isNull(notes.trashedAt)))
    .where(eq(folders.workspaceId, s.workspaceId))
    .groupBy(folders.id)
    .orderBy(asc(folders.nameKey))
    .all();
  return html`<aside class="side">
  <h3>Folders</h3>
  <ul>
    <li><a href="/notes" class="${activeFolder === null ? "on" : ""}">All notes</a></li>
    ${rows.map((f) => html`<li><a href="/notes?folder=${f.id}" class="${activeFolder === f.id ? "on" : ""}">${f.name}<span>${f.n}</span></a></li>`)}
  </ul>
  <form method="post" action="/folders" class="row">${csrfField(s)}<input type="text" name="name" placeholder="New folder" maxlength="80" required aria-label="New folder name"><button type="submit">Add</button></form>
  ${
    activeFolder
      ? html`<details class="small mt10"><summary>Folder settings</summary>
      <form method="post" action="/folders/${activeFolder}/rename" class="row mt8">${csrfField(s)}<input type="text" name="name" maxlength="80" required placeholder="New name"><button>Rename</button></form>
      <form method="post" action="/folders/${activeFolder}/delete" class="mt8">${csrfField(s)}<button class="danger">Delete folder (notes stay)</button></form></details>`
      : ""
  }
</aside>`;
}

function kindBadge(n: Pick<NoteRow, "kind" | "format" | "deadmanStatus" | "webhookStatus">): Html {
  return html`${n.kind === "stream" ? html`<span class="badge">stream</span>` : n.format === "rich" ? html`<span class="badge">rich</span>` : ""}${
    n.deadmanStatus === "late" ? html`<span class="badge late">late</span>` : ""
  }${n.webhookStatus === "disabled" ? html`<span class="badge disabled">webhook off</span>` : ""}`;
}

function folderOptions(deps: Deps, s: WebSession, selected: string | null): Html {
  const rows = deps.db.select({ id: folders.id, name: folders.name }).from(folders).where(eq(folders.workspaceId, s.workspaceId)).orderBy(asc(folders.nameKey)).all();
  return html`<option value="">No folder</option>${rows.map((f) => html`<option value="${f.id}" ${f.id === selected ? raw("selected") : ""}>${f.name}</option>`)}`;
}

/** The newest part of a stream: chunks from the end until about TAIL_BYTES. */
function streamTail(deps: Deps, noteId: string): { text: string; lastSeq: number; truncated: boolean } {
  const rows = deps.db.$client
    .query<{ seq: number; text: string }, [string]>("SELECT seq, text FROM note_chunks WHERE note_id = ? ORDER BY seq DESC")
    .iterate(noteId);
  const parts: string[] = [];
  let size = 0;
  let lastSeq = 0;
  let truncated = false;
  for (const r of rows) {
    if (lastSeq === 0) lastSeq = r.seq;
    if (size >= TAIL_BYTES) {
      truncated = true;
      break;
    }
    parts.push(r.text);
    size += r.text.length;
  }
  return { text: parts.reverse().join(""), lastSeq, truncated };
}

function notePage(deps: Deps, s: WebSession, note: NoteRow, url: URL): Response {
  const actions = html`<div class="row">
    <form method="post" action="/notes/${note.id}/move" class="row">${csrfField(s)}<select name="folder_id" aria-label="Folder">${folderOptions(deps, s, note.folderId)}</select><button>Move</button></form>
    <a class="button" href="/notes/${note.id}/download/txt">TXT</a>
    ${note.format === "rich" ? html`<a class="button" href="/notes/${note.id}/download/docx">DOCX</a><a class="button" href="/notes/${note.id}/download/pdf">PDF</a>` : ""}
    ${note.kind === "stream" ? html`<a class="button" href="/notes/${note.id}/settings">Webhook, inbox, alerts</a>` : ""}
    <form method="post" action="/notes/${note.id}/delete" data-confirm="Delete this note for good?">${csrfField(s)}<button class="danger">Delete</button></form>
  </div>`;
  let main: Html;
  if (note.kind === "stream") {
    const tail = streamTail(deps, note.id);
    main = html`<div class="card">
      <div class="row spread"><h1>${note.title}</h1>${kindBadge(note)}</div>
      <p class="muted small"><code>${note.filename}</code> · <span id="byte-size">${note.byteSize}</span> bytes · last write ${when(iso(note.lastWriteAt))}${
        tail.truncated ? html` · showing the newest ${bytes(TAIL_BYTES)}, <a href="/notes/${note.id}/download/txt">download it all</a>` : ""
      }</p>
      <pre class="stream" data-tail="/notes/${note.id}/tail" data-after="${tail.lastSeq}">${tail.text}</pre>
      <p class="status">New lines appear here as they arrive.</p>
    </div>`;
  } else if (note.format === "rich") {
    main = html`<div class="card">
      <label><span>Title</span><input type="text" id="title" value="${note.title}" maxlength="200"></label>
      <div class="toolbar"><button data-cmd="bold"><b>B</b></button><button data-cmd="italic"><i>I</i></button><button data-cmd="underline"><u>U</u></button><button data-cmd="formatBlock" data-arg="h2">H</button><button data-cmd="insertUnorderedList">• List</button><button data-cmd="insertOrderedList">1. List</button><button data-cmd="formatBlock" data-arg="blockquote">“ Quote</button></div>
      <div class="editor" contenteditable="true" data-rich="/notes/${note.id}/save">${raw(note.richHtml ?? "")}</div>
      <p class="status" id="save-status">Changes save by themselves.</p>
    </div>`;
  } else {
    main = html`<div class="card">
      <form method="post" action="/notes/${note.id}/save">${csrfField(s)}
        <label><span>Title</span><input type="text" id="title" name="title" value="${note.title}" maxlength="200"></label>
        <textarea name="plain_body" data-autosave="/notes/${note.id}/save" aria-label="Note text">${note.body ?? ""}</textarea>
        <div class="row spread"><p class="status" id="save-status">Changes save by themselves.</p><noscript><button class="primary">Save</button></noscript></div>
      </form>
    </div>`;
  }
  const snaps =
    note.kind === "editable"
      ? listSnapshots({ ctx: s.ctx, noteId: note.id })
      : [];
  const history =
    note.kind === "editable"
      ? html`<div class="card"><h2>Earlier versions</h2>${
          snaps.length === 0
            ? html`<p class="muted small">None yet. A version is kept when you edit (saves within ten minutes share one; five are kept).</p>`
            : html`<table><tr><th>Saved</th><th>Title</th><th>Size</th><th></th></tr>${snaps.map(
                (v) => html`<tr><td>${when(v.created_at)}</td><td>${v.title}</td><td>${bytes(v.byte_size)}</td><td><form method="post" action="/notes/${note.id}/snapshots/${v.id}/restore">${csrfField(s)}<button>Restore</button></form></td></tr>`,
              )}</table>`
        }</div>`
      : "";
  return page(
    layout({
      title: note.title,
      session: s,
      active: "notes",
      flash: flashFrom(url),
      body: html`<div class="shell">${sidebar(deps, s, note.folderId)}<div>${actions}<div class="gap"></div>${main}${history}</div></div>`,
    }),
  );
}

function listPage(deps: Deps, s: WebSession, url: URL): Response {
  const folder = url.searchParams.get("folder");
  const q = url.searchParams.get("q")?.trim() ?? "";
  const pageNo = pageNumber(url.searchParams.get("page"));
  const conds: SQL[] = [eq(notes.workspaceId, s.workspaceId), isNull(notes.trashedAt)];
  if (folder) conds.push(eq(notes.folderId, folder));
  if (q) conds.push(like(notes.title, `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`));
  const where = and(...conds);
  const total = deps.db.select({ n: count() }).from(notes).where(where).get()!.n;
  const rows = deps.db
    .select({ id: notes.id, title: notes.title, kind: notes.kind, format: notes.format, filename: notes.filename, byteSize: notes.byteSize, updatedAt: notes.updatedAt, deadmanStatus: notes.deadmanStatus, webhookStatus: notes.webhookStatus })
    .from(notes)
    .where(where)
    .orderBy(desc(notes.updatedAt), desc(notes.id))
    .limit(PAGE_SIZE)
    .offset((pageNo - 1) * PAGE_SIZE)
    .all();
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  const link = (p: number) => `/notes?${new URLSearchParams({ ...(folder ? { folder } : {}), ...(q ? { q } : {}), page: String(p) })}`;
  return page(
    layout({
      title: "Notes",
      session: s,
      active: "notes",
      flash: flashFrom(url),
      body: html`<div class="shell">${sidebar(deps, s, folder)}<div>
  <div class="row spread mb14">
    <form method="get" action="/notes" class="row grow">${folder ? html`<input type="hidden" name="folder" value="${folder}">` : ""}<input type="search" name="q" value="${q}" placeholder="Search titles" aria-label="Search titles"><button>Search</button></form>
    <form method="post" action="/notes/new" class="row">${csrfField(s)}${folder ? html`<input type="hidden" name="folder_id" value="${folder}">` : ""}<button class="primary" name="format" value="plain">New note</button><button name="format" value="rich">New rich note</button></form>
  </div>
  <div class="card">
  ${
    rows.length === 0
      ? html`<p class="muted">${q ? "No note has that in its title." : html`No notes here yet. Create one, or append to a stream over the API: <code>POST /api/v1/notes/by-filename/&lt;name&gt;/append</code>.`}</p>`
      : html`<ul class="notes">${rows.map(
          (n) => html`<li><a href="/notes/${n.id}"><strong>${n.title}</strong><span class="meta">${when(iso(n.updatedAt))}</span><span class="meta">${n.kind === "stream" ? n.filename : "editable"} · ${bytes(n.byteSize)}</span><span>${kindBadge(n)}</span></a></li>`,
        )}</ul>`
  }
  </div>
  ${pages > 1 ? html`<nav class="pager">${pageNo > 1 ? html`<a href="${link(pageNo - 1)}">← Newer</a>` : ""}<span class="muted">Page ${pageNo} of ${pages} · ${total} notes</span>${pageNo < pages ? html`<a href="${link(pageNo + 1)}">Older →</a>` : ""}</nav>` : ""}
</div></div>`,
    }),
  );
}

function webNote(s: WebSession, id: string): NoteRow {
  return visibleNote(s.ctx, id);
}

const notFound = (s: WebSession) =>
  page(layout({ title: "Not found", session: s, body: html`<div class="card"><h1>Not found</h1><p>There is no such note in this account. <a href="/notes">Back to your notes</a></p></div>` }), 404);

export const notePages = (deps: Deps) => {
  const saveBody = saveBodyChecker(deps);
  return new Elysia()
    .get("/notes", ({ request }) => {
      const s = requireSession(deps, request);
      return s instanceof Response ? s : listPage(deps, s, new URL(request.url));
    })
    .post("/notes/new", async ({ request, body }) => {
      const b = body as Body;
      const s = requireForm(deps, request, b);
      if (s instanceof Response) return s;
      try {
        const folderId = b.folder_id || null;
        const r =
          b.format === "rich"
            ? await (await import("../notes/rich")).createRichNote({ ctx: s.ctx, title: "Untitled", html: "<p></p>", folderId })
            : await noteService.createNote({ ctx: s.ctx, input: { title: "Untitled", plain_body: "", folder_id: folderId } });
        return redirect(`/notes/${r.body.id}`);
      } catch (e) {
        return back("/notes", "error", errorMessage(e));
      }
    })
    .get("/notes/:id", ({ request, params }) => {
      const s = requireSession(deps, request);
      if (s instanceof Response) return s;
      try {
        return notePage(deps, s, webNote(s, params.id), new URL(request.url));
      } catch (e) {
        if (e instanceof AppError && e.code === "not_found") return notFound(s);
        throw e;
      }
    })
    .get("/notes/:id/tail", ({ request, params, query }) => {
      const s = requireSession(deps, request);
      if (s instanceof Response) return new Response(null, { status: 401 });
      const note = webNote(s, params.id);
      // The sequence number the page last saw, digits only (Number() takes "1e400" as Infinity).
      const after = /^[0-9]{1,15}$/.test(String(query.after ?? "")) ? Number(query.after) : 0;
      const rows = deps.db
        .select({ seq: noteChunks.seq, text: noteChunks.text })
        .from(noteChunks)
        .where(and(eq(noteChunks.noteId, note.id), gt(noteChunks.seq, after)))
        .orderBy(asc(noteChunks.seq))
        .limit(500)
        .all();
      return Response.json({ text: rows.map((r) => r.text).join(""), after: rows.length ? rows[rows.length - 1]!.seq : after, byte_size: note.byteSize });
    })
    .post("/notes/:id/save", async ({ request, params, body }) => {
      const b = (body ?? {}) as Body & { html?: string };
      const s = requireForm(deps, request, b);
      if (s instanceof Response) return s;
      const isForm = !(request.headers.get("content-type") ?? "").includes("json");
      try {
        if (!saveBody.Check(b)) throw saveBodyProblems(saveBody, b);
        limit(deps, "savesPerAccount", s.account.id);
        const note = webNote(s, params.id);
        if (note.format === "rich") await (await import("../notes/rich")).updateRichNote({ ctx: s.ctx, id: note.id, title: b.title, html: b.html });
        else await noteService.updateNote({ ctx: s.ctx, id: note.id, input: { title: b.title, plain_body: b.plain_body } });
        return isForm ? back(`/notes/${params.id}`, "ok", "Saved.") : Response.json({ ok: true });
      } catch (e) {
        if (isForm) return back(`/notes/${params.id}`, "error", errorMessage(e));
        // The editor's script reads error.message; the envelope is the API's.
        if (e instanceof AppError) return errorResponse(e);
        return Response.json({ error: { code: "bad_request", message: errorMessage(e) } }, { status: 400 });
      }
    })
    .post("/notes/:id/move", ({ request, params, body }) =>
      formAction<Body>(deps, request, body, async (s, b) => {
        await noteService.updateNote({ ctx: s.ctx, id: params.id, input: { folder_id: b.folder_id || null } });
        return back(`/notes/${params.id}`, "ok", "Moved.");
      }, `/notes/${params.id}`),
    )
    .post("/notes/:id/delete", ({ request, params, body }) =>
      formAction(deps, request, body, async (s) => {
        await noteService.deleteNote({ ctx: s.ctx, id: params.id });
        return back("/notes", "ok", "Note deleted.");
      }, `/notes/${params.id}`),
    )
    .post("/notes/:id/snapshots/:sid/restore", ({ request, params, body }) =>
      formAction(deps, request, body, async (s) => {
        await restoreSnapshot({ ctx: s.ctx, noteId: params.id, snapshotId: params.sid });
        return back(`/notes/${params.id}`, "ok", "Restored. The version you had is kept in the list, so you can go back.");
      }, `/notes/${params.id}`),
    )
    .get("/notes/:id/download/:ext", async ({ request, params }) => {
      const s = requireSession(deps, request);
      if (s instanceof Response) return s;
      let note: NoteRow;
      try {
        note = webNote(s, params.id);
      } catch {
        return notFound(s);
      }
      try {
        limit(deps, "downloadsPerAccount", s.account.id);
      } catch (e) {
        return back(`/notes/${note.id}`, "error", errorMessage(e));
      }
      const name = (note.filename ?? note.title).replace(/[^\w.\- ]+/g, "_").slice(0, 80) || "note";
      const disposition = (ext: string) => `attachment; filename="${name.replace(/\.txt$/, "")}.${ext}"`;
      const text = readBody(deps, note);
      if (params.ext === "txt") return new Response(text, { headers: { "content-type": "text/plain; charset=utf-8", "content-disposition": disposition("txt") } });
      if (note.format !== "rich") return notFound(s);
      // The DOCX and PDF libraries load on the first such download.
      const { renderDocx, renderPdf } = await import("../notes/render");
      if (params.ext === "docx") {
        return new Response(await renderDocx(note.title, text), {
          headers: { "content-type": "application/vnd.openxmlformats-officedocument.wordprocessingml.document", "content-disposition": disposition("docx") },
        });
      }
      if (params.ext === "pdf") return new Response(await renderPdf(note.title, text), { headers: { "content-type": "application/pdf", "content-disposition": disposition("pdf") } });
      return notFound(s);
    })
    .post("/folders", ({ request, body }) =>
      formAction<Body>(deps, request, body, async (s, b) => {
        const r = await folderService.createFolder({ ctx: s.ctx, name: b.name ?? "" });
        return redirect(`/notes?folder=${r.body.id}`);
      }, "/notes"),
    )
    .post("/folders/:id/rename", ({ request, params, body }) =>
      formAction<Body>(deps, request, body, async (s, b) => {
        await folderService.renameFolder({ ctx: s.ctx, id: params.id, name: b.name ?? "" });
        return back(`/notes?folder=${params.id}`, "ok", "Folder renamed.");
      }, `/notes?folder=${params.id}`),
    )
    .post("/folders/:id/delete", ({ request, params, body }) =>
      formAction(deps, request, body, async (s) => {
        await folderService.deleteFolder({ ctx: s.ctx, id: params.id });
        return back("/notes", "ok", "Folder deleted; its notes are unfiled.");
      }, `/notes?folder=${params.id}`),
    );
};
