import { Elysia, t } from "elysia";
import { TypeCompiler, ValueErrorType } from "@sinclair/typebox/compiler";
import type { Deps } from "../../deps";
import { AppError, errorResponse, ValidationFailed, type FieldProblem } from "../../http/errors";
import { TITLE_MAX_CHARS } from "../../lib/text";
import { bodyCaps } from "../../limits/plans";
import { html, page } from "../../web/html";
import { requireForm, SignInRequired } from "../../web/guard";
import { back, csrfField, flashFrom, layout } from "../../web/layout";
import { pageMacros, type RefusalPage } from "../../web/macros";
import { refusalMessage } from "../../web/refusal";
import { loadSession, type WebSession } from "../../web/session";
import { readBody, visibleNote, type NoteRow } from "../notes/repo";
import * as noteService from "../notes/service";
import { TRASH_DAYS } from "../notes/trash";
import { listSnapshots } from "../snapshots/service";
import { followStream } from "../streams/follow-events";
import { readableStream } from "../streams/lines";
import { textFields } from "./form";
import { limit } from "./limits";
import { newNotePage } from "./new-note-page";
import { folderOptions, noteNotFound, sidebar } from "./note-parts";
import { plainEditor, richEditor, streamView, versionsCard } from "./note-views";
import { versionPages } from "./version-pages";

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

async function notePage(deps: Deps, s: WebSession, note: NoteRow, url: URL): Promise<Response> {
  const actions = html`<div class="row">
    <form method="post" action="/notes/${note.id}/move" class="row">${csrfField(s)}<select name="folder_id" aria-label="Folder">${await folderOptions(deps, s, note.folderId)}</select><button>Move</button></form>
    <a class="button" href="/notes/${note.id}/download/txt">TXT</a>
    ${note.format === "rich" ? html`<a class="button" href="/notes/${note.id}/download/docx">DOCX</a><a class="button" href="/notes/${note.id}/download/pdf">PDF</a>` : ""}
    ${note.kind === "stream" ? html`<a class="button" href="/notes/${note.id}/settings">Webhook, inbox, alerts</a>` : ""}
    <form method="post" action="/notes/${note.id}/delete" data-confirm="Move this note to the trash? You can restore it from Trash for ${TRASH_DAYS} days.">${csrfField(s)}<button class="danger">Delete</button></form>
  </div>`;
  const main = note.kind === "stream" ? await streamView(deps, note) : note.format === "rich" ? richEditor(note) : plainEditor(s, note);
  const history = note.kind === "editable" ? versionsCard(s, note, await listSnapshots({ ctx: s.ctx, noteId: note.id })) : "";
  return page(
    layout({
      title: note.title,
      session: s,
      active: "notes",
      flash: flashFrom(url),
      body: html`<div class="shell">${await sidebar(deps, s, note.folderId)}<div>${actions}<div class="gap"></div>${main}${history}</div></div>`,
    }),
  );
}

/** A note this account cannot see is the page's 404; other refusals are the API's. */
const noteRefused: RefusalPage = (e, { s }) => (e.code === "not_found" ? noteNotFound(s) : undefined);

const sentJson = (request: Request) => (request.headers.get("content-type") ?? "").includes("json");

/** The plain editor posts a form and is sent back; the editors' script posts JSON and reads error.message. */
const saveRefused: RefusalPage = (e, { request, params }) => (sentJson(request) ? errorResponse(e) : back(`/notes/${params.id}`, "error", refusalMessage(e)));

/** Past the download limit, back to the note with the message; a note this account cannot see is the page's 404. */
const downloadRefused: RefusalPage = (e, { s, params }) =>
  e.code === "rate_limited" ? back(`/notes/${params.id}`, "error", refusalMessage(e)) : noteNotFound(s);

const DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

/** One note's page (a stream live, an editor, earlier versions), its saves, actions and downloads; a new note; an earlier version. */
export const notePages = (deps: Deps) => {
  const saveBody = saveBodyChecker(deps);
  return new Elysia()
    .use(pageMacros(deps))
    .use(newNotePage(deps))
    .use(versionPages(deps))
    .get("/notes/:id", async ({ s, params, request }) => notePage(deps, s, await visibleNote(s.ctx, params.id), new URL(request.url)), {
      session: "page",
      refused: noteRefused,
    })
    .get(
      "/notes/:id/events",
      async ({ s, params, query, request }) => {
        const note = await readableStream(s.ctx, { id: params.id });
        // The API's follow (Server-Sent Events), for the page's script; one browser account holds ten.
        return followStream(deps, {
          noteId: note.id,
          workspaceId: note.workspaceId,
          query: { cursor: query.cursor },
          request,
          key: `browser:${s.account.id}`,
          stillAllowed: async () => {
            const again = await loadSession(deps, request);
            if (!again) throw new AppError("unauthorized", "signed out");
            await readableStream(again.ctx, { id: note.id });
          },
        });
      },
      { session: "script" },
    )
    // What the editors' script needs to save again after signing in anew (another tab's sign-in
    // gives the session a new CSRF token). Same-origin only: pages get no CORS.
    .get("/notes/:id/save", async ({ s, params }) => Response.json({ csrf_token: s.csrf, note_id: (await visibleNote(s.ctx, params.id)).id }), {
      session: "script",
      refused: noteRefused,
    })
    .post(
      "/notes/:id/save",
      async ({ params, body, request }) => {
        // A session that ended is told apart from a refused form: the editor keeps the text and
        // offers to sign in (a bare 401); a form without the script goes to sign-in and back.
        if (!(await loadSession(deps, request))) throw new SignInRequired(sentJson(request) ? null : `/notes/${params.id}`);
        // The token from the header or, for a page that is closing (a beacon sets no header), the body's _csrf.
        const s = await requireForm(deps, request, body);
        const b = textFields(body) as { title?: string; plain_body?: string; html?: string };
        if (!saveBody.Check(b)) throw saveBodyProblems(saveBody, b);
        await limit(deps, "savesPerAccount", s.account.id);
        const note = await visibleNote(s.ctx, params.id);
        const saved =
          note.format === "rich"
            ? await (await import("../notes/rich")).updateRichNote({ ctx: s.ctx, id: note.id, title: b.title, html: b.html })
            : await noteService.updateNote({ ctx: s.ctx, id: note.id, input: { title: b.title, plain_body: b.plain_body } });
        return sentJson(request) ? Response.json({ ok: true, updated_at: saved.body.updated_at }) : back(`/notes/${params.id}`, "ok", "Saved.");
      },
      { refused: saveRefused },
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
    .get(
      "/notes/:id/download/:ext",
      async ({ s, params }) => {
        const note = await visibleNote(s.ctx, params.id);
        await limit(deps, "downloadsPerAccount", s.account.id);
        const name = (note.filename ?? note.title).replace(/[^\w.\- ]+/g, "_").slice(0, 80) || "note";
        const disposition = (ext: string) => `attachment; filename="${name.replace(/\.txt$/, "")}.${ext}"`;
        const text = await readBody(deps, note);
        if (params.ext === "txt") return new Response(text, { headers: { "content-type": "text/plain; charset=utf-8", "content-disposition": disposition("txt") } });
        if (note.format !== "rich") return noteNotFound(s);
        // The DOCX and PDF libraries load on the first such download.
        const { renderDocx, renderPdf } = await import("../notes/render");
        if (params.ext === "docx") return new Response(await renderDocx(note.title, text), { headers: { "content-type": DOCX_TYPE, "content-disposition": disposition("docx") } });
        if (params.ext === "pdf") return new Response(await renderPdf(note.title, text), { headers: { "content-type": "application/pdf", "content-disposition": disposition("pdf") } });
        return noteNotFound(s);
      },
      { session: "page", refused: downloadRefused },
    );
};
