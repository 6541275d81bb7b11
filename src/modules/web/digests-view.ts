// The Channels page's Digests section: the workspace's scheduled summaries (when, in words, to
// which channel or address, of which streams), each with Send now and Delete, and the form that
// adds one. Its routes are in digest-pages.ts.
import { pageFrom } from "../../lib/pagination";
import { html, raw, type Html } from "../../web/html";
import { csrfField, when } from "../../web/layout";
import type { WebSession } from "../../web/session";
import type { ChannelRecord } from "../channels/model";
import { MAX_DIGEST_LINES, MAX_DIGESTS, type DigestRecord } from "../digests/model";
import { listDigests } from "../digests/service";
import type { ChannelsSection } from "./channels-view";
import { chosen, distinct, fieldProblem, formProblem, invalid, typed, type FormState } from "./settings-forms";
import { scheduleWords } from "./watch-view";

export const DIGESTS = "/digests";
export const DIGEST_ADD = "digest-add";
export const DIGEST_ROW = "digest-row";
/** The destination select's value for "the address typed below". */
export const TO_EMAIL = "email";

function destination(d: DigestRecord, byId: Map<string, ChannelRecord>): Html {
  if (d.email !== null) return html`${d.email} <span class="badge">e-mail</span>`;
  const c = byId.get(d.channel_id ?? "");
  return c ? html`${c.name} <span class="badge">channel</span>` : html`<span class="muted">a deleted channel</span>`;
}

function digestRow(s: WebSession, d: DigestRecord, label: string, byId: Map<string, ChannelRecord>): Html {
  return html`<tr data-digest="${d.id}"><td data-label="When"><span data-digest-words>${scheduleWords(d.schedule)}</span> <span class="muted small">(${d.timezone})</span><div class="mono small muted">${d.schedule}</div></td><td data-label="To">${destination(d, byId)}</td><td data-label="Streams">${
    d.streams === "all" ? "all" : d.streams.join(", ")
  }<div class="muted small">last ${d.last_lines} lines each</div></td><td data-label="Next">${when(d.next_run_at)}<div class="muted small">last sent: ${when(d.last_sent_at)}</div></td><td data-label=""><div class="row"><form method="post" action="${DIGESTS}/${d.id}/send">${csrfField(s)}<button aria-label="Send now: ${label}">Send now</button></form><form method="post" action="${DIGESTS}/${d.id}/delete" data-confirm="Delete this digest? No more summaries go out on its schedule.">${csrfField(s)}<button class="danger" aria-label="Delete ${label}">Delete</button></form></div></td></tr>`;
}

function addForm(s: WebSession, channels: ChannelRecord[], state: FormState | undefined): Html {
  const f = DIGEST_ADD;
  const to = typed(state, f, "to", channels[0]?.id ?? TO_EMAIL);
  const allStreams = chosen(state, f, "scope", "all", true);
  return html`${formProblem(state, f)}<form method="post" action="${DIGESTS}" id="add-digest">${csrfField(s)}
  <label><span>When (cron; 0 8 * * 1-5 is 08:00 on weekdays)</span><input type="text" name="schedule" required spellcheck="false" placeholder="0 8 * * 1-5" value="${typed(state, f, "schedule", "")}"${invalid(state, f, "schedule")}>${fieldProblem(state, f, "schedule")}</label>
  <label><span>Time zone</span><input type="text" name="timezone" spellcheck="false" placeholder="UTC" value="${typed(state, f, "timezone", "UTC")}"${invalid(state, f, "timezone")}>${fieldProblem(state, f, "timezone")}</label>
  <label><span>Send to</span><select name="to"${invalid(state, f, "to")}>${channels.map((c) => html`<option value="${c.id}" ${c.id === to ? raw("selected") : ""}>channel: ${c.name}</option>`)}<option value="${TO_EMAIL}" ${to === TO_EMAIL ? raw("selected") : ""}>the e-mail address below</option></select>${fieldProblem(state, f, "to")}</label>
  <label><span>E-mail address (when sent by mail)</span><input type="email" name="email" value="${typed(state, f, "email", "")}"${invalid(state, f, "email")}>${fieldProblem(state, f, "email")}</label>
  <fieldset class="group"><legend>Streams</legend><label class="check"><input type="radio" name="scope" value="all" ${allStreams ? raw("checked") : ""}> all of the workspace's streams</label><label class="check"><input type="radio" name="scope" value="list" ${allStreams ? "" : raw("checked")}> only these filenames:</label>
  <label><span class="sr-only">Filenames, separated by commas</span><input type="text" name="streams" spellcheck="false" placeholder="backup.log, deploy.log" value="${typed(state, f, "streams", "")}"${invalid(state, f, "streams")}>${fieldProblem(state, f, "streams")}</label></fieldset>
  <label><span>Last lines quoted per active stream (0 to ${MAX_DIGEST_LINES})</span><input type="number" name="last_lines" min="0" max="${MAX_DIGEST_LINES}" value="${typed(state, f, "last_lines", "5")}"${invalid(state, f, "last_lines")}>${fieldProblem(state, f, "last_lines")}</label>
  <button class="primary">Add digest</button></form>`;
}

/** The section, below the channels (channel-pages.ts lists it). */
export const digestsSection: ChannelsSection = async (_deps, s, channels, state) => {
  const digests = (await listDigests({ ctx: s.ctx, page: pageFrom({ limit: MAX_DIGESTS }) })).items;
  const byId = new Map(channels.map((c) => [c.id, c]));
  const labels = distinct(
    digests.map((d) => `the digest ${scheduleWords(d.schedule)}`),
    digests.map((d) => d.id),
  );
  return html`<div class="card" id="digests"><h2>Digests <span class="muted small">${digests.length} of ${MAX_DIGESTS}</span></h2>
  <p class="small">“What happened overnight” as one message: on a schedule, for each stream since the last digest, the lines and bytes added, alerts raised, its status now and its last lines; quiet streams share one line.</p>
  ${formProblem(state, DIGEST_ROW)}${
    digests.length
      ? html`<table class="cards digests"><thead><tr><th>When</th><th>To</th><th>Streams</th><th>Next</th><th><span class="sr-only">Actions</span></th></tr></thead><tbody>${digests.map((d, i) => digestRow(s, d, labels[i]!, byId))}</tbody></table>`
      : html`<p class="muted">None yet.</p>`
  }
  <h3 class="small muted">Add a digest</h3>${addForm(s, channels, state)}</div>`;
};
