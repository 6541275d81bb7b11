// The Channels page as it is drawn: the workspace's channels (a disabled one with why and a
// Re-enable button), each with its test, edit and delete forms, and the form that adds one, with
// the URL each provider takes. Its routes are in channel-pages.ts.
import type { Deps } from "../../deps";
import { pageFrom } from "../../lib/pagination";
import type { OneTimeFlash } from "../../web/flash";
import { html, page, raw, type Html } from "../../web/html";
import { csrfField, layout, when } from "../../web/layout";
import type { WebSession } from "../../web/session";
import { CHANNEL_NAME_MAX_CHARS, MAX_CHANNELS, type ChannelRecord } from "../channels/model";
import { listChannels } from "../channels/service";
import { WEBHOOK_FORMATS } from "../webhooks/formats";
import { deliveryErrorText } from "../webhooks/wording";
import { distinct, fieldProblem, formProblem, invalid, typed, type FormState } from "./settings-forms";

export const CHANNELS = "/channels";

/** What the page shows besides the channels: a one-time flash, or a refused form again. */
export interface ChannelsView {
  flash: OneTimeFlash;
  form?: FormState;
}

/** A section of the page drawn by another file (the digests), given the channels already read. */
export type ChannelsSection = (deps: Deps, s: WebSession, channels: ChannelRecord[], form: FormState | undefined) => Promise<Html> | Html;

/** One example per provider, as the README's Notifications table writes them. */
const EXAMPLES: [string, string][] = [
  ["e-mail", "mailto:oncall@example.com"],
  ["ntfy", "ntfys://ntfy.sh/my-topic"],
  ["Telegram", "tgram://123456789:BOT_TOKEN/CHAT_ID"],
  ["Pushover", "pover://USER_KEY@APP_TOKEN"],
  ["Gotify", "gotifys://gotify.example.com/APP_TOKEN"],
  ["Matrix", "matrixs://ACCESS_TOKEN@matrix.example.org/!roomid:example.org"],
  ["chat or your own receiver", "https://hooks.slack.com/services/… (choose its format)"],
];

const KIND_NAMES: Record<ChannelRecord["kind"], string> = { mailto: "e-mail", ntfy: "ntfy", tgram: "Telegram", pover: "Pushover", gotify: "Gotify", matrix: "Matrix", webhook: "webhook" };

/** The workspace's channels, all of them (a workspace has at most MAX_CHANNELS). */
export async function workspaceChannels(s: WebSession): Promise<ChannelRecord[]> {
  return (await listChannels({ ctx: s.ctx, page: pageFrom({ limit: MAX_CHANNELS }) })).items;
}

export const editForm = (id: string) => `edit:${id}`;

/** The format select; the page's script shows it only for http(s) URLs, where it applies. */
function formatField(state: FormState | undefined, form: string, stored: string): Html {
  const format = typed(state, form, "format", stored);
  return html`<label data-channel-format><span>Format (for https:// URLs)</span><select name="format"${invalid(state, form, "format")}>${WEBHOOK_FORMATS.map((f) => html`<option value="${f}" ${f === format ? raw("selected") : ""}>${f}</option>`)}</select>${fieldProblem(state, form, "format")}</label>`;
}

function addForm(s: WebSession, state: FormState | undefined, first: boolean): Html {
  const f = "add";
  return html`${formProblem(state, f)}<form method="post" action="${CHANNELS}" id="add-channel">${csrfField(s)}
  <label><span>Name</span><input type="text" name="name" required maxlength="${CHANNEL_NAME_MAX_CHARS}" placeholder="e.g. phone" value="${typed(state, f, "name", "")}"${invalid(state, f, "name")}>${fieldProblem(state, f, "name")}</label>
  <label><span>URL</span><input type="text" name="url" required spellcheck="false" autocomplete="off" placeholder="ntfys://ntfy.sh/my-topic" data-channel-url value="${typed(state, f, "url", "")}"${invalid(state, f, "url")}>${fieldProblem(state, f, "url")}</label>
  ${formatField(state, f, "generic")}
  <button class="primary">Add channel</button></form>
  <details class="mt10"${first ? raw(" open") : ""}><summary>URLs each provider takes</summary><table class="cards"><thead><tr><th>Provider</th><th>URL</th></tr></thead><tbody>${EXAMPLES.map(
    ([who, url]) => html`<tr><td data-label="Provider">${who}</td><td data-label="URL"><code>${url}</code></td></tr>`,
  )}</tbody></table><p class="muted small">ntfy:// and gotify:// for plain http; ntfys://TOKEN@host/topic or user:pass@ for a protected topic; ?priority= on ntfy, Pushover and Gotify.</p></details>`;
}

function statusCell(c: ChannelRecord): Html {
  if (c.status === "enabled") return html`<span class="badge ok" data-status="enabled">enabled</span>`;
  return html`<span class="badge disabled" data-status="disabled">disabled</span><div class="error-text small">Turned off after ${c.failures} failed deliveries in a row. Fix the receiver, then re-enable.</div>`;
}

function lastAttempt(c: ChannelRecord): Html {
  if (c.last_attempt_at === null) return html`<span class="muted">never</span>`;
  const problem = deliveryErrorText(c.last_error);
  return html`${when(c.last_attempt_at)}<div class="small" data-last-result>${problem === null ? html`<span class="ok-text">delivered</span>` : html`<span class="error-text">${problem}</span>`}</div>`;
}

function channelRow(s: WebSession, c: ChannelRecord, label: string, state: FormState | undefined): Html {
  const f = editForm(c.id);
  const refused = state?.form === f;
  return html`<tr data-channel="${c.id}" class="${c.status === "disabled" ? "attention" : ""}"><td data-label="Name"><strong>${c.name}</strong> <span class="badge">${KIND_NAMES[c.kind]}</span></td><td data-label="URL" class="mono small">${c.url}</td><td data-label="Status">${statusCell(c)}</td><td data-label="Last attempt">${lastAttempt(c)}</td><td data-label="">
  <div class="row">${c.status === "disabled" ? html`<form method="post" action="${CHANNELS}/${c.id}">${csrfField(s)}<button class="primary" aria-label="Re-enable ${label}">Re-enable</button></form>` : ""}<form method="post" action="${CHANNELS}/${c.id}/test">${csrfField(s)}<button aria-label="Send test to ${label}">Send test</button></form><form method="post" action="${CHANNELS}/${c.id}/delete" data-confirm="Delete the channel ${c.name}? Streams stop sending to it, escalations to it end and digests sent to it are deleted.">${csrfField(s)}<button class="danger" aria-label="Delete ${label}">Delete</button></form></div>
  <details class="mt8"${refused ? raw(" open") : ""}><summary>Edit<span class="sr-only"> ${label}</span></summary>${formProblem(state, f)}<form method="post" action="${CHANNELS}/${c.id}">${csrfField(s)}
    <label><span>Name</span><input type="text" name="name" required maxlength="${CHANNEL_NAME_MAX_CHARS}" value="${typed(state, f, "name", c.name)}"${invalid(state, f, "name")}>${fieldProblem(state, f, "name")}</label>
    <label><span>New URL (empty keeps the one above)</span><input type="text" name="url" spellcheck="false" autocomplete="off" data-channel-url data-kind="${c.kind}" value="${typed(state, f, "url", "")}"${invalid(state, f, "url")}>${fieldProblem(state, f, "url")}</label>
    ${formatField(state, f, c.format)}
    <button class="primary">Save${c.status === "disabled" ? " and re-enable" : ""}</button></form></details>
</td></tr>`;
}

function channelsTable(s: WebSession, channels: ChannelRecord[], state: FormState | undefined): Html {
  if (channels.length === 0) return html`<p class="muted">None yet: add one below, then choose it on a stream's settings page.</p>`;
  const labels = distinct(
    channels.map((c) => c.name),
    channels.map((c) => c.id),
  );
  return html`<table class="cards channels"><thead><tr><th>Name</th><th>URL</th><th>Status</th><th>Last attempt</th><th><span class="sr-only">Actions</span></th></tr></thead><tbody>${channels.map((c, i) => channelRow(s, c, labels[i]!, state))}</tbody></table>`;
}

export async function channelsPage(deps: Deps, s: WebSession, view: ChannelsView, sections: ChannelsSection[], status = 200, headers: Record<string, string> = {}): Promise<Response> {
  const channels = await workspaceChannels(s);
  const disabled = channels.filter((c) => c.status === "disabled").length;
  const extra = await Promise.all(sections.map((draw) => draw(deps, s, channels, view.form)));
  return page(
    layout({
      title: "Channels",
      session: s,
      active: "channels",
      flash: view.flash,
      body: html`<h1>Channels</h1>
<p class="small">Where a stream's alerts and lines go besides mail: a phone through ntfy, Telegram, Pushover or Gotify, a Matrix room, a chat webhook, another mailbox. Choose which streams send here on each stream's settings page (Notify).</p>
${disabled ? html`<div class="flash error" role="status">${disabled === 1 ? "A channel is" : `${disabled} channels are`} turned off after failed deliveries: nothing reaches ${disabled === 1 ? "it" : "them"} until re-enabled.</div>` : ""}
<div class="card"><h2>Your channels <span class="muted small">${channels.length} of ${MAX_CHANNELS}</span></h2>${formProblem(view.form, "row")}${channelsTable(s, channels, view.form)}</div>
<div class="card"><h2>Add a channel</h2>${addForm(s, view.form, channels.length === 0)}</div>
${extra}`,
    }),
    status,
    headers,
  );
}
