// The stream settings page's Notify card: which of the workspace's channels get the stream's
// alerts and lines, each entry with its form (change, remove), and a form adding one. The forms'
// routes are in notify-pages.ts.
import { html, raw, type Html } from "../../web/html";
import { csrfField } from "../../web/layout";
import type { WebSession } from "../../web/session";
import type { ChannelRecord } from "../channels/model";
import { MAX_BATCH_SECONDS, MAX_NOTIFY, notifyOf, type NotifyEntry } from "../channels/notify";
import type { NoteRow } from "../notes/repo";
import { CHANNELS, workspaceChannels } from "./channels-view";
import { chosen, describedBy, distinct, fieldProblem, formProblem, invalid, typed, type FormState } from "./settings-forms";

export const NOTIFY_ADD = "notify-add";
export const entryForm = (channelId: string) => `notify:${channelId}`;

function eventsField(state: FormState | undefined, form: string, stored: NotifyEntry["events"], label: string): Html {
  const box = (v: "alerts" | "lines", words: string) =>
    html`<label class="check"><input type="checkbox" name="events" value="${v}" ${chosen(state, form, "events", v, stored.includes(v)) ? raw("checked") : ""}${state?.form === form && state.errors.events ? raw(' aria-invalid="true"') : ""}> ${words}</label>`;
  return html`<fieldset class="group"${describedBy(state, form, "events")}><legend>What goes to ${label}</legend><div class="row">${box("alerts", "alerts")}${box("lines", "lines as they are appended")}</div>${fieldProblem(state, form, "events")}</fieldset>`;
}

function batchField(state: FormState | undefined, form: string, stored: number | null): Html {
  return html`<label><span>Lines: one message per window of (seconds; empty: one per append)</span><input type="number" name="batch_seconds" min="1" max="${MAX_BATCH_SECONDS}" step="1" value="${typed(state, form, "batch_seconds", stored === null ? "" : String(stored))}"${invalid(state, form, "batch_seconds")}>${fieldProblem(state, form, "batch_seconds")}</label>`;
}

function entryRow(s: WebSession, note: NoteRow, e: NotifyEntry, name: string, state: FormState | undefined): Html {
  const f = entryForm(e.channel_id);
  return html`<li data-notify="${e.channel_id}">${formProblem(state, f)}<form method="post" action="/notes/${note.id}/notify/${e.channel_id}">${csrfField(s)}
  <h3 class="small">${name}</h3>${eventsField(state, f, e.events, name)}${batchField(state, f, e.batch_seconds)}
  <div class="row"><button class="primary" aria-label="Save what goes to ${name}">Save</button><button name="remove" value="yes" class="danger" aria-label="Remove ${name}">Remove</button></div></form></li>`;
}

/** The card: the stream's notify entries, and a form adding one of the channels not in it yet. */
export async function notifyCard(s: WebSession, note: NoteRow, state: FormState | undefined): Promise<Html> {
  const channels = await workspaceChannels(s);
  const entries = notifyOf(note);
  const byId = new Map(channels.map((c) => [c.id, c]));
  const names = distinct(
    entries.map((e) => byId.get(e.channel_id)?.name ?? e.channel_id),
    entries.map((e) => e.channel_id),
  );
  const free = channels.filter((c) => !entries.some((e) => e.channel_id === c.id));
  const disabled = entries.filter((e) => byId.get(e.channel_id)?.status === "disabled").map((e) => byId.get(e.channel_id)!.name);
  return html`<div class="card" id="notify"><h2>Notify</h2>
  <p class="small">Send this stream's alerts (late, failing, full, recovered…) and, if you like, its lines to channels: ntfy, Telegram, Pushover, Gotify, Matrix, chat webhooks, mail. Flood control holds any channel to 20 messages a minute from this stream.</p>
  ${disabled.length ? html`<div class="flash error">Turned off after failed deliveries: ${disabled.join(", ")}. <a href="${CHANNELS}">Re-enable on the Channels page</a>.</div>` : ""}
  ${entries.length ? html`<ul class="plain notify-list">${entries.map((e, i) => entryRow(s, note, e, names[i]!, state))}</ul>` : ""}
  ${channels.length === 0 ? html`<p class="muted">This workspace has no channels yet. <a href="${CHANNELS}">Add one on the Channels page</a>, then choose it here.</p>` : free.length === 0 || entries.length >= MAX_NOTIFY ? "" : addForm(s, note, free, state)}
</div>`;
}

function addForm(s: WebSession, note: NoteRow, free: ChannelRecord[], state: FormState | undefined): Html {
  const picked = typed(state, NOTIFY_ADD, "channel_id", "");
  return html`<h3 class="small muted">Add a channel</h3>${formProblem(state, NOTIFY_ADD)}<form method="post" action="/notes/${note.id}/notify">${csrfField(s)}
  <label><span>Channel</span><select name="channel_id"${invalid(state, NOTIFY_ADD, "channel_id")}>${free.map((c) => html`<option value="${c.id}" ${c.id === picked ? raw("selected") : ""}>${c.name} (${c.url})</option>`)}</select>${fieldProblem(state, NOTIFY_ADD, "channel_id")}</label>
  ${eventsField(state, NOTIFY_ADD, ["alerts"], "it")}${batchField(state, NOTIFY_ADD, null)}
  <button class="primary">Add</button></form>`;
}

