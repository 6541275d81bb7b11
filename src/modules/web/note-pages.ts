import { Elysia, t } from "elysia";
import { TypeCompiler, ValueErrorType } from "@sinclair/typebox/compiler";
import type { Deps } from "../../deps";
import { AppError, errorResponse, ValidationFailed, type FieldProblem } from "../../http/errors";
import { iso } from "../../lib/clock";
import { TITLE_MAX_CHARS } from "../../lib/text";
import { bodyCaps } from "../../limits/plans";
import { html, page, raw, type Html } from "../../web/html";
import { back, bytes, csrfField, flashFrom, layout, when } from "../../web/layout";
import { pageMacros, type RefusalPage } from "../../web/macros";
import { refusalMessage } from "../../web/refusal";
import { loadSession, type WebSession } from "../../web/session";
import { folderNames } from "../folders/repo";
import { readBody, streamTail, visibleNote, type NoteRow } from "../notes/repo";
import * as noteService from "../notes/service";
import { TRASH_DAYS } from "../notes/trash";
import { listSnapshots, restoreSnapshot } from "../snapshots/service";
import { followStream } from "../streams/follow";
import { cursorOf, endOf, readableStream } from "../streams/lines";
import { textFields } from "./form";
import { limit } from "./limits";
import { kindBadge, sidebar } from "./note-parts";

/** How much of a long stream the page shows; the rest is a download away. */
const TAIL_BYTES = 128 * 1024;

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

function folderOptions(deps: Deps, s: WebSession, selected: string | null): Html {
  const rows = folderNames(deps, s.workspaceId);
  return html`<option value="">No folder</option>${rows.map((f) => html`<option value="${f.id}" ${f.id === selected ? raw("selected") : ""}>${f.name}</option>`)}`;
}

function notePage(deps: Deps, s: WebSession, note: NoteRow, url: URL): Response {
  const actions = html`<div class="row">
    <form method="post" action="/notes/${note.id}/move" class="row">${csrfField(s)}<select name="folder_id" aria-label="Folder">${folderOptions(deps, s, note.folderId)}</select><button>Move</button></form>
    <a class="button" href="/notes/${note.id}/download/txt">TXT</a>
    ${note.format === "rich" ? html`<a class="button" href="/notes/${note.id}/download/docx">DOCX</a><a class="button" href="/notes/${note.id}/download/pdf">PDF</a>` : ""}
    ${note.kind === "stream" ? html`<a class="button" href="/notes/${note.id}/settings">Webhook, inbox, alerts</a>` : ""}
    <form method="post" action="/notes/${note.id}/delete" data-confirm="Move this note to the trash? You can restore it from Trash for ${TRASH_DAYS} days.">${csrfField(s)}<button class="danger">Delete</button></form>
  </div>`;
  let main: Html;
  if (note.kind === "stream") {
    const tail = streamTail(deps, note.id, TAIL_BYTES);
    main = html`<div class="card">
      <div class="row spread"><h1>${note.title}</h1>${kindBadge(note)}</div>
      <p class="muted small"><code>${note.filename}</code> · <span id="byte-size">${note.byteSize}</span> bytes · last write ${when(iso(note.lastWriteAt))}${
        tail.truncated ? html` · showing the newest ${bytes(TAIL_BYTES)}, <a href="/notes/${note.id}/download/txt">download it all</a>` : ""
      }</p>
      <pre class="stream" data-tail="/notes/${note.id}/events" data-cursor="${cursorOf(endOf(deps, note.id))}">${tail.text}</pre>
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
  const snaps = note.kind === "editable" ? listSnapshots({ ctx: s.ctx, noteId: note.id }) : [];
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

const notFound = (s: WebSession | undefined) =>
  page(layout({ title: "Not found", session: s, body: html`<div class="card"><h1>Not found</h1><p>There is no such note in this account. <a href="/notes">Back to your notes</a></p></div>` }), 404);

/** A note this account cannot see is the page's 404; other refusals are the API's. */
const noteRefused: RefusalPage = (e, { s }) => (e.code === "not_found" ? notFound(s) : undefined);

const sentJson = (request: Request) => (request.headers.get("content-type") ?? "").includes("json");

/** The plain editor posts a form and is sent back; the editors' script posts JSON and reads error.message. */
const saveRefused: RefusalPage = (e, { request, params }) => (sentJson(request) ? errorResponse(e) : back(`/notes/${params.id}`, "error", refusalMessage(e)));

/** Past the download limit, back to the note with the message; a note this account cannot see is the page's 404. */
const downloadRefused: RefusalPage = (e, { s, params }) =>
  e.code === "rate_limited" ? back(`/notes/${params.id}`, "error", refusalMessage(e)) : notFound(s);

const DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

/** One note's page (a stream live, an editor, earlier versions), its saves, actions and downloads. */
export const notePages = (deps: Deps) => {
  const saveBody = saveBodyChecker(deps);
  return new Elysia()
    .use(pageMacros(deps))
    .get("/notes/:id", ({ s, params, request }) => notePage(deps, s, visibleNote(s.ctx, params.id), new URL(request.url)), {
      session: "page",
      refused: noteRefused,
    })
    .get(
      "/notes/:id/events",
      ({ s, params, query, request }) => {
        const note = readableStream(s.ctx, { id: params.id });
        // The API's follow (Server-Sent Events), for the page's script; one browser account holds ten.
        return followStream(deps, {
          noteId: note.id,
          query: { cursor: query.cursor },
          request,
          key: `browser:${s.account.id}`,
          stillAllowed: () => {
            const again = loadSession(deps, request);
            if (!again) throw new AppError("unauthorized", "signed out");
            readableStream(again.ctx, { id: note.id });
          },
        });
      },
      { session: "script" },
    )
    .post(
      "/notes/:id/save",
      async ({ s, params, body, request }) => {
        const b = textFields(body) as { title?: string; plain_body?: string; html?: string };
        if (!saveBody.Check(b)) throw saveBodyProblems(saveBody, b);
        limit(deps, "savesPerAccount", s.account.id);
        const note = visibleNote(s.ctx, params.id);
        if (note.format === "rich") await (await import("../notes/rich")).updateRichNote({ ctx: s.ctx, id: note.id, title: b.title, html: b.html });
        else await noteService.updateNote({ ctx: s.ctx, id: note.id, input: { title: b.title, plain_body: b.plain_body } });
        return sentJson(request) ? Response.json({ ok: true }) : back(`/notes/${params.id}`, "ok", "Saved.");
      },
      { session: "form", refused: saveRefused },
    )
    .post(
      "/notes/:id/move",
      async ({ s, params, body }) => {
        await noteService.updateNote({ ctx: s.ctx, id: params.id, input: { folder_id: textFields(body).folder_id || null } });
        return back(`/notes/${params.id}`, "ok", "Moved.");
      },
      { session: "form", refused: "/notes/:id" },
    )
    .post(
      "/notes/:id/delete",
      async ({ s, params }) => {
        await noteService.deleteNote({ ctx: s.ctx, id: params.id });
        return back("/notes", "ok", `Moved to the trash. Restore it from Trash within ${TRASH_DAYS} days; after that it is deleted for good.`);
      },
      { session: "form", refused: "/notes/:id" },
    )
    .post(
      "/notes/:id/snapshots/:sid/restore",
      async ({ s, params }) => {
        await restoreSnapshot({ ctx: s.ctx, noteId: params.id, snapshotId: params.sid });
        return back(`/notes/${params.id}`, "ok", "Restored. The version you had is kept in the list, so you can go back.");
      },
      { session: "form", refused: "/notes/:id" },
    )
    .get(
      "/notes/:id/download/:ext",
      async ({ s, params }) => {
        const note = visibleNote(s.ctx, params.id);
        limit(deps, "downloadsPerAccount", s.account.id);
        const name = (note.filename ?? note.title).replace(/[^\w.\- ]+/g, "_").slice(0, 80) || "note";
        const disposition = (ext: string) => `attachment; filename="${name.replace(/\.txt$/, "")}.${ext}"`;
        const text = readBody(deps, note);
        if (params.ext === "txt") return new Response(text, { headers: { "content-type": "text/plain; charset=utf-8", "content-disposition": disposition("txt") } });
        if (note.format !== "rich") return notFound(s);
        // The DOCX and PDF libraries load on the first such download.
        const { renderDocx, renderPdf } = await import("../notes/render");
        if (params.ext === "docx") return new Response(await renderDocx(note.title, text), { headers: { "content-type": DOCX_TYPE, "content-disposition": disposition("docx") } });
        if (params.ext === "pdf") return new Response(await renderPdf(note.title, text), { headers: { "content-type": "application/pdf", "content-disposition": disposition("pdf") } });
        return notFound(s);
      },
      { session: "page", refused: downloadRefused },
    );
};
