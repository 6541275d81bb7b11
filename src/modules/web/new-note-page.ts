import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { TITLE_MAX_CHARS } from "../../lib/text";
import { ValidationFailed } from "../../http/errors";
import { html, page, raw } from "../../web/html";
import { csrfField, layout, redirect } from "../../web/layout";
import { pageMacros, type RefusalPage } from "../../web/macros";
import { refusalMessage } from "../../web/refusal";
import type { WebSession } from "../../web/session";
import * as noteService from "../notes/service";
import { textFields } from "./form";
import { folderOptions, sidebar } from "./note-parts";

interface NewNote {
  title: string;
  format: "plain" | "rich";
  folderId: string | null;
}

const valuesOf = (fields: Record<string, string | undefined>): NewNote => ({
  title: fields.title ?? "",
  format: fields.format === "rich" ? "rich" : "plain",
  folderId: fields.folder_id || null,
});

/**
 * The note is made only when it has a title: a "New note" click alone no longer leaves an
 * "Untitled" note behind, using one of the plan's note slots. A refusal shows the form again
 * with what was typed and the message beside the title (or above the form when it is not the title's).
 */
async function newNoteForm(deps: Deps, s: WebSession, v: NewNote, problem: { title?: string; other?: string } = {}, status = 200): Promise<Response> {
  const choice = (value: NewNote["format"], label: string, hint: string) =>
    html`<label class="check"><input type="radio" name="format" value="${value}" ${v.format === value ? raw("checked") : ""}> <span>${label} <span class="muted small">${hint}</span></span></label>`;
  return page(
    layout({
      title: "New note",
      session: s,
      active: "notes",
      flash: { error: problem.other },
      body: html`<div class="shell">${await sidebar(deps, s, v.folderId)}<div><div class="card narrow-form">
  <h1>New note</h1>
  <form method="post" action="/notes/create" novalidate>${csrfField(s)}
    <label><span>Title</span><input type="text" id="new-title" name="title" value="${v.title}" maxlength="${TITLE_MAX_CHARS}" required autofocus ${
      problem.title ? raw('aria-invalid="true" aria-describedby="new-title-error"') : ""
    }></label>
    ${problem.title ? html`<p class="field-error" id="new-title-error">${problem.title}</p>` : ""}
    <fieldset><legend>Kind</legend>
      ${choice("plain", "Plain text", "(readable and writable over the API)")}
      ${choice("rich", "Rich text", "(bold, lists, links; downloads as DOCX and PDF; the API reads its text)")}
    </fieldset>
    <label><span>Folder</span><select name="folder_id">${await folderOptions(deps, s, v.folderId)}</select></label>
    <div class="row"><button class="primary">Create note</button><a href="${v.folderId ? `/notes?folder=${v.folderId}` : "/notes"}">Cancel</a></div>
  </form>
</div></div></div>`,
    }),
    status,
  );
}

/** The title's own problems go beside it; any other refusal (the plan's note cap, a read-only account) above the form. */
const refusedAgain =
  (deps: Deps): RefusalPage =>
  (e, { s, body }) => {
    if (!s) return undefined;
    const titleProblems = e instanceof ValidationFailed ? (e.details as { field: string; message: string }[]).filter((d) => /title$/.test(d.field)) : [];
    const said = titleProblems.map((d) => d.message).join(" ");
    const problem = said ? { title: said.charAt(0).toUpperCase() + said.slice(1) + "." } : { other: refusalMessage(e) };
    return newNoteForm(deps, s, valuesOf(textFields(body)), problem, e.status);
  };

/** GET /notes/new asks for the title, the kind and the folder; POST /notes/create makes the note. */
export const newNotePage = (deps: Deps) =>
  new Elysia()
    .use(pageMacros(deps))
    .get(
      "/notes/new",
      ({ s, query }) => newNoteForm(deps, s, { title: "", format: query.format === "rich" ? "rich" : "plain", folderId: query.folder || null }),
      { session: "page" },
    )
    .post(
      "/notes/create",
      async ({ s, body }) => {
        const v = valuesOf(textFields(body));
        if (v.title.trim() === "") return newNoteForm(deps, s, v, { title: "Give the note a title." }, 422);
        const r =
          v.format === "rich"
            ? await (await import("../notes/rich")).createRichNote({ ctx: s.ctx, title: v.title.trim(), html: "<p></p>", folderId: v.folderId })
            : await noteService.createNote({ ctx: s.ctx, input: { title: v.title.trim(), plain_body: "", folder_id: v.folderId } });
        return redirect(`/notes/${r.body.id}`);
      },
      { session: "form", refused: refusedAgain(deps) },
    );
