import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { html, page } from "../../web/html";
import { back, flashFrom, layout } from "../../web/layout";
import { pageMacros, type RefusalPage } from "../../web/macros";
import { visibleNote } from "../notes/repo";
import { previewSnapshot, restoreSnapshot } from "../snapshots/service";
import { noteNotFound, sidebar } from "./note-parts";
import { versionView } from "./note-views";

/** A version that is gone (only five are kept) goes back to the note with the message; a note this account cannot see is the page's 404. */
const versionRefused: RefusalPage = (e, { s, params }) => {
  if (e.code !== "not_found") return undefined;
  return e.message.startsWith("snapshot") ? back(`/notes/${params.id}`, "error", "That version is no longer kept (a note keeps its five newest).") : noteNotFound(s);
};

/** An earlier version of a note, previewed read only before it is restored, and its restore. */
export const versionPages = (deps: Deps) =>
  new Elysia()
    .use(pageMacros(deps))
    .get(
      "/notes/:id/snapshots/:sid",
      async ({ s, params, request }) => {
        const note = await visibleNote(s.ctx, params.id);
        const v = await previewSnapshot({ ctx: s.ctx, noteId: note.id, snapshotId: params.sid });
        return page(
          layout({
            title: `Earlier version of ${note.title}`,
            session: s,
            active: "notes",
            flash: flashFrom(new URL(request.url)),
            body: html`<div class="shell">${await sidebar(deps, s, note.folderId)}<div>${versionView(s, note, v)}</div></div>`,
          }),
        );
      },
      { session: "page", refused: versionRefused },
    )
    .post(
      "/notes/:id/snapshots/:sid/restore",
      async ({ s, params }) => {
        await restoreSnapshot({ ctx: s.ctx, noteId: params.id, snapshotId: params.sid });
        return back(`/notes/${params.id}`, "ok", "Restored. The version you had is kept in the list, so you can go back.");
      },
      { session: "form", refused: "/notes/:id" },
    );
