import type { Deps } from "../../deps";
import { TITLE_MAX_CHARS } from "../../lib/text";
import { iso } from "../../lib/clock";
import { html, raw, type Html } from "../../web/html";
import { bytes, csrfField, when } from "../../web/layout";
import type { WebSession } from "../../web/session";
import type { NoteRow } from "../notes/repo";
import type { SnapshotRecord } from "../snapshots/model";
import { cursorOf, endOf, newestLines } from "../streams/lines";
import { kindBadge } from "./note-parts";

/** How much of a long stream the page shows; the rest is a download away. */
export const TAIL_BYTES = 128 * 1024;

/** "2025-03-01 14:05 UTC": what a version is called in buttons' names, where the visible time is relative. */
const utcName = (isoTime: string) => `${isoTime.replace("T", " ").slice(0, 16)} UTC`;

/**
 * What the editors' script needs on the editing element: where to save, which note (its local
 * draft's key) and when its text was last saved (a draft older than that is stale).
 */
function editorData(note: NoteRow): Html {
  return html`data-autosave="/notes/${note.id}/save" data-note="${note.id}" data-saved-at="${note.lastWriteAt}"`;
}

/**
 * Under both editors: the save state, what went wrong with a way forward (sign in in a new tab
 * when the session ended, Retry), and the offer of a draft this browser kept. The script shows
 * the parts that apply; without it, only the first line shows.
 */
function saveState(note: NoteRow): Html {
  const signIn = `/signin?next=${encodeURIComponent(`/notes/${note.id}`)}`;
  return html`<p class="status" id="save-status" role="status">Changes save by themselves.</p>
  <div class="save-problem" id="save-problem" role="alert" hidden><span id="save-problem-text"></span>
    <a id="save-signin" href="${signIn}" target="_blank" rel="noopener" hidden>Sign in in a new tab</a>
    <button type="button" id="save-retry">Retry</button></div>
  <div class="draft-bar" id="draft-bar" role="region" aria-label="Unsaved text kept in this browser" hidden><span id="draft-text"></span>
    <button type="button" id="draft-restore">Restore</button><button type="button" id="draft-discard">Discard</button></div>`;
}

export function plainEditor(s: WebSession, note: NoteRow): Html {
  return html`<div class="card">
      <form method="post" action="/notes/${note.id}/save">${csrfField(s)}
        <label><span>Title</span><input type="text" id="title" name="title" value="${note.title}" maxlength="${TITLE_MAX_CHARS}"></label>
        <textarea name="plain_body" ${editorData(note)} aria-label="Note text">${note.body ?? ""}</textarea>
        ${saveState(note)}
        <noscript><button class="primary">Save</button></noscript>
      </form>
    </div>`;
}

/** Visible text of a toolbar button, its accessible name, and the editing command it runs. */
const TOOLS: [Html, string, string, string?][] = [
  [html`<b>B</b>`, "Bold", "bold"],
  [html`<i>I</i>`, "Italic", "italic"],
  [html`<u>U</u>`, "Underline", "underline"],
  [html`H`, "Heading", "formatBlock", "h2"],
  [html`¶`, "Paragraph", "formatBlock", "p"],
  [html`• List`, "Bulleted list", "insertUnorderedList"],
  // Its "1." comes from the stylesheet: a button's visible words must be in its name (WCAG 2.5.3), and "1" is not in "Numbered list".
  [html`<span class="numbered">List</span>`, "Numbered list", "insertOrderedList"],
  [html`“ Quote`, "Quote", "formatBlock", "blockquote"],
];

export function richEditor(note: NoteRow): Html {
  return html`<div class="card">
      <label><span>Title</span><input type="text" id="title" value="${note.title}" maxlength="${TITLE_MAX_CHARS}"></label>
      <span class="field-label" id="rich-label">Text</span>
      <div class="toolbar" role="toolbar" aria-label="Formatting" aria-controls="rich-text">${TOOLS.map(
        ([face, name, cmd, arg]) => html`<button type="button" data-cmd="${cmd}" ${arg ? html`data-arg="${arg}"` : ""} aria-label="${name}" title="${name}">${face}</button>`,
      )}<button type="button" data-link aria-label="Link" title="Link (an http, https or mailto address)">Link</button></div>
      <div class="editor" id="rich-text" contenteditable="true" role="textbox" aria-multiline="true" aria-labelledby="rich-label" ${editorData(note)}>${raw(note.richHtml ?? "")}</div>
      ${saveState(note)}
    </div>`;
}

/** A line's time travels with it (data-at); the script shows it, in the browser's time zone, when asked. */
const line = (l: { text: string; at: string }) => html`<span class="ln" data-at="${l.at}">${l.text}\n</span>`;

export async function streamView(deps: Deps, note: NoteRow): Promise<Html> {
  const tail = await newestLines(deps, note.id, TAIL_BYTES);
  const last = tail.lines.at(-1)?.cursor ?? cursorOf(await endOf(deps, note.id));
  // The follow starts after the last line shown, so a line appended meanwhile still arrives.
  return html`<div class="card">
      <div class="row spread"><h1>${note.title}</h1>${kindBadge(note)}</div>
      <p class="muted small"><code>${note.filename}</code> · <span id="byte-size">${note.byteSize}</span> bytes · last write <span id="last-write">${when(iso(note.lastWriteAt))}</span>${
        tail.truncated ? html` · showing the newest ${bytes(TAIL_BYTES)}, <a href="/notes/${note.id}/download/txt">download it all</a>` : ""
      }</p>
      <div class="row spread small mb10"><span class="live" id="live-state" role="status" hidden>Connecting…</span><label class="check" id="times-toggle" hidden><input type="checkbox" id="show-times"> Show times</label></div>
      <pre class="stream" data-tail="/notes/${note.id}/events" data-cursor="${last}">${tail.lines.map(line)}</pre>
      <p class="status">New lines appear here as they arrive.</p>
    </div>`;
}

/** The note's earlier versions, each with a preview (its own page) and a restore. */
export function versionsCard(s: WebSession, note: NoteRow, snaps: SnapshotRecord[]): Html {
  return html`<div class="card"><h2>Earlier versions</h2>${
    snaps.length === 0
      ? html`<p class="muted small">None yet. A version is kept when you edit (saves within ten minutes share one; five are kept).</p>`
      : html`<p class="muted small">Each is the note as it was before a burst of saves (saves within ten minutes share one; five are kept). Preview one before restoring it; a restore keeps the text you have as a version too.</p>
      <table class="cards"><tr><th>Saved</th><th>Title</th><th>Size</th><th></th></tr>${snaps.map(
        (v) => html`<tr><td data-label="Saved">${when(v.created_at)}</td><td data-label="Title">${v.title}</td><td data-label="Size">${bytes(v.byte_size)}</td><td data-label=""><div class="row">
          <a class="button" href="/notes/${note.id}/snapshots/${v.id}" aria-label="Preview the version of ${utcName(v.created_at)}">Preview</a>
          <form method="post" action="/notes/${note.id}/snapshots/${v.id}/restore">${csrfField(s)}<button aria-label="Restore the version of ${utcName(v.created_at)}">Restore</button></form></div></td></tr>`,
      )}</table>`
  }</div>`;
}

/** One earlier version, read only, with its time and a Restore. */
export function versionView(s: WebSession, note: NoteRow, v: SnapshotRecord & { rich_html: string | null }): Html {
  return html`<div class="card">
    <p class="small"><a href="/notes/${note.id}">← Back to the note</a></p>
    <h1>Earlier version of “${note.title}”</h1>
    <p class="muted small">As it was at ${when(v.created_at)}, before the saves that followed: title “${v.title}”, ${bytes(v.byte_size)}. Read only; restoring it keeps the text the note has now as a version.</p>
    ${
      v.rich_html === null
        ? html`<pre class="version" id="version-text" tabindex="0" aria-label="The version's text">${v.plain_body ?? ""}</pre>`
        : html`<div class="editor version" id="version-text" role="document" tabindex="0" aria-label="The version's text">${raw(v.rich_html)}</div>`
    }
    <form method="post" action="/notes/${note.id}/snapshots/${v.id}/restore" class="mt10">${csrfField(s)}<button class="primary">Restore this version</button></form>
  </div>`;
}
