import type { Deps } from "../../deps";
import { FOLDER_NAME_MAX_CHARS } from "../../lib/text";
import { html, page, raw, type Html } from "../../web/html";
import { csrfField, layout } from "../../web/layout";
import type { WebSession } from "../../web/session";
import { folderNames, foldersWithNoteCounts } from "../folders/repo";
import type { NoteRow } from "../notes/repo";

/**
 * What the note list, a note's page and the trash show: the folder sidebar (`activeFolder`:
 * null for all notes, "trash" for the trash), and a note's badges.
 */
export async function sidebar(deps: Deps, s: WebSession, activeFolder: string | null): Promise<Html> {
  const rows = await foldersWithNoteCounts(deps, s.workspaceId);
  return html`<aside class="side">
  <h3>Folders</h3>
  <ul>
    <li><a href="/notes" class="${activeFolder === null ? "on" : ""}">All notes</a></li>
    ${rows.map((f) => html`<li><a href="/notes?folder=${f.id}" class="${activeFolder === f.id ? "on" : ""}">${f.name}<span>${f.n}</span></a></li>`)}
    <li><a href="/trash" class="${activeFolder === "trash" ? "on" : ""}">Trash</a></li>
  </ul>
  <form method="post" action="/folders" class="row">${csrfField(s)}<input type="text" name="name" placeholder="New folder" maxlength="${FOLDER_NAME_MAX_CHARS}" required aria-label="New folder name"><button type="submit">Add</button></form>
  ${
    activeFolder && activeFolder !== "trash"
      ? html`<details class="small mt10"><summary>Folder settings</summary>
      <form method="post" action="/folders/${activeFolder}/rename" class="row mt8">${csrfField(s)}<input type="text" name="name" maxlength="${FOLDER_NAME_MAX_CHARS}" required placeholder="New name" aria-label="New name of the folder"><button>Rename</button></form>
      <form method="post" action="/folders/${activeFolder}/delete" class="mt8">${csrfField(s)}<button class="danger">Delete folder (notes stay)</button></form></details>`
      : ""
  }
</aside>`;
}

export function kindBadge(n: Pick<NoteRow, "kind" | "format" | "deadmanStatus" | "webhookStatus" | "fullSince">): Html {
  return html`${n.kind === "stream" ? html`<span class="badge">stream</span>` : n.format === "rich" ? html`<span class="badge">rich</span>` : ""}${
    n.deadmanStatus === "late" ? html`<span class="badge late">late</span>` : ""
  }${fullBadge(n)}${n.webhookStatus === "disabled" ? html`<span class="badge disabled">webhook off</span>` : ""}`;
}

/** A stream refusing appends at its size cap (retention reject): shown wherever the stream is. */
export function fullBadge(n: Pick<NoteRow, "fullSince">): Html | "" {
  return n.fullSince === null ? "" : html`<span class="badge full">full</span>`;
}

/** A folder picker's options: no folder, then the workspace's folders, `selected` chosen. */
export async function folderOptions(deps: Deps, s: WebSession, selected: string | null): Promise<Html> {
  const rows = await folderNames(deps, s.workspaceId);
  return html`<option value="">No folder</option>${rows.map((f) => html`<option value="${f.id}" ${f.id === selected ? raw("selected") : ""}>${f.name}</option>`)}`;
}

/** A note this account cannot see (another's, deleted, never there): one 404 page for all. */
export const noteNotFound = (s: WebSession | undefined) =>
  page(layout({ title: "Not found", session: s, body: html`<div class="card"><h1>Not found</h1><p>There is no such note in this account. <a href="/notes">Back to your notes</a></p></div>` }), 404);
