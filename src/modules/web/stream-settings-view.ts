// The stream's settings page as it is drawn: its four cards (outbound webhook, inbox, retention,
// quiet alert), each with its form and a refused form's problems in place. The forms' routes are
// in stream-settings-pages.ts.
import type { Deps } from "../../deps";
import { iso } from "../../lib/clock";
import { pageFrom } from "../../lib/pagination";
import { bodyCapFor } from "../../limits/plans";
import { secretCard, secretField, type OneTimeFlash } from "../../web/flash";
import { html, page, raw, type Html } from "../../web/html";
import { bytes, csrfField, layout, redirect, when } from "../../web/layout";
import type { WebSession } from "../../web/session";
import { plansWithDeadman } from "../deadman/availability";
import { listInboxDeliveries } from "../inbox/service";
import { visibleNote, type NoteRow } from "../notes/repo";
import { MAX_RETENTION_DAYS } from "../streams/retention";
import { WEBHOOK_FORMATS } from "../webhooks/formats";
import { listWebhookAttempts } from "../webhooks/service";
import { isTestDelivery } from "../webhooks/test-delivery";
import { deliveryErrorText } from "../webhooks/wording";
import { getWorkspace, tierOf } from "../workspaces/repo";
import { BADGE_FLASH, badgeCard } from "./badge-view";
import { inboxTemplateCard } from "./inbox-template-card";
import { fullBadge } from "./note-parts";
import { notifyCard } from "./notify-card";
import { rulesCard } from "./rules-view";
import { distinct, fieldProblem, formProblem, invalid, typed, type FormState } from "./settings-forms";
import { followUpsCard, quietCard, scheduleCard } from "./watch-view";

/** What a settings page shows besides the stream: a one-time flash, or a refused form again. */
export interface View {
  flash: OneTimeFlash;
  form?: FormState;
}

export async function streamSettingsPage(deps: Deps, s: WebSession, noteId: string, view: View, status = 200, headers: Record<string, string> = {}): Promise<Response> {
  const note = await visibleNote(s.ctx, noteId);
  if (note.kind !== "stream") return redirect(`/notes/${note.id}`);
  const inboxUrl = view.flash.secret?.kind === "inbox-url" ? view.flash.secret.value : null;
  return page(
    layout({
      title: `${note.title}: settings`,
      session: s,
      active: "notes",
      flash: view.flash,
      body: html`<p><a href="/notes/${note.id}">← ${note.title}</a></p><h1>Webhook, inbox and alerts</h1>${
        inboxUrl ? secretCard("inbox-url", "Inbox URL", inboxUrl, "Give this URL to the sender. It is shown only this once; anyone with it can add lines.") : ""
      }
${await webhookCard(s, note, view.form)}
${await inboxCard(s, note, view.form)}
${await inboxTemplateCard(s, note, view.form)}
${await retentionCard(s, note, view.form)}
${await deadmanCard(deps, s, note, view.form)}
${scheduleCard(s, note, view.form, await deadmanAvailable(deps, note), deps.clock.now())}
${quietCard(s, note, view.form, deps.clock.now())}
${followUpsCard(s, note, view.form)}
${rulesCard(s, note, view.form)}
${await notifyCard(s, note, view.form)}
${badgeCard(s, note, view.form, view.flash.secret?.kind === BADGE_FLASH ? view.flash.secret.value : null)}`,
    }),
    status,
    headers,
  );
}

async function webhookCard(s: WebSession, note: NoteRow, state: FormState | undefined): Promise<Html> {
  const attempts = (await listWebhookAttempts({ ctx: s.ctx, noteId: note.id, page: pageFrom({ limit: 10 }) })).items;
  const format = typed(state, "webhook", "webhook_format", note.webhookFormat);
  return html`<div class="card"><h2>Outbound webhook ${note.webhookStatus === "enabled" ? html`<span class="badge ok">on</span>` : note.webhookStatus === "disabled" ? html`<span class="badge disabled">disabled</span>` : ""}</h2>
  ${note.webhookStatus === "disabled" ? html`<div class="flash error">Deliveries kept failing, so the webhook was turned off. Fix the receiver (a test delivery tells whether it answers now), then save here to turn it back on.</div>` : ""}
  <p class="small">Every append is POSTed to this URL, signed with <code>X-Service-Signature</code> and Standard Webhooks headers.</p>
  ${formProblem(state, "webhook")}
  <form method="post" action="/notes/${note.id}/webhook">${csrfField(s)}
    <label><span>URL</span><input type="url" name="webhook_url" value="${typed(state, "webhook", "webhook_url", note.webhookUrl ?? "")}" placeholder="https://hooks.example.com/…"${invalid(state, "webhook", "webhook_url")}>${fieldProblem(state, "webhook", "webhook_url")}</label>
    <label><span>Format</span><select name="webhook_format"${invalid(state, "webhook", "webhook_format")}>${WEBHOOK_FORMATS.map((f) => html`<option value="${f}" ${f === format ? raw("selected") : ""}>${f}</option>`)}</select>${fieldProblem(state, "webhook", "webhook_format")}</label>
    <div class="row"><button class="primary">Save webhook</button>${note.webhookUrl ? html`<button name="remove" value="yes" class="danger">Remove</button>` : ""}</div>
  </form>
  ${note.webhookSecret ? html`<div class="mt10"><p class="small">Signing secret (receivers verify each delivery with it):</p>${secretField("webhook-secret", "Webhook signing secret", note.webhookSecret)}</div>` : ""}
  ${formProblem(state, "test-delivery")}${
    note.webhookUrl
      ? html`<div class="mt10"><form method="post" action="/notes/${note.id}/webhook/test" class="row">${csrfField(s)}<button>Send a test delivery</button><span class="muted small">One signed test payload in the format above (type <code>webhook.test</code>); nothing is added to the stream. Its result shows below.</span></form></div>`
      : ""
  }
  ${attempts.length ? html`<h3 class="small muted">Recent deliveries</h3>${deliveriesTable(attempts)}` : ""}
</div>`;
}

type Attempt = Awaited<ReturnType<typeof listWebhookAttempts>>["items"][number];

/** Each attempt in words; the status and time only when the receiver answered. */
function deliveriesTable(attempts: Attempt[]): Html {
  return html`<table class="cards deliveries"><thead><tr><th>When</th><th>Delivery</th><th>Result</th><th>Answer</th></tr></thead><tbody>${attempts.map((a) => {
    const problem = deliveryErrorText(a.error);
    return html`<tr><td data-label="When">${when(a.at)}</td><td data-label="Delivery"><span class="mono small">${a.delivery_id}</span> <span class="muted small">attempt ${a.attempt}</span>${isTestDelivery(a.delivery_id) ? html`<span class="badge">test</span>` : ""}</td><td data-label="Result">${
      problem === null ? html`<span class="ok-text">delivered</span>` : html`<span class="error-text">${problem}</span>`
    }</td><td data-label="Answer">${a.status_code === null ? html`<span class="muted">no answer</span>` : `${a.status_code} in ${a.duration_ms} ms`}</td></tr>`;
  })}</tbody></table>`;
}

async function inboxCard(s: WebSession, note: NoteRow, state: FormState | undefined): Promise<Html> {
  const dead = (await listInboxDeliveries({ ctx: s.ctx, noteId: note.id, status: "dead", page: pageFrom({ limit: 20 }) })).items;
  const recent = (await listInboxDeliveries({ ctx: s.ctx, noteId: note.id, page: pageFrom({ limit: 5 }) })).items;
  const replayNames = distinct(
    dead.map((d) => `Replay the payload received ${d.received_at.replace("T", " ").slice(0, 16)} UTC`),
    dead.map((d) => d.id),
  );
  return html`<div class="card"><h2>Inbox ${note.inboxTokenHash ? html`<span class="badge ok">on</span>` : ""}</h2>
  <p class="small">Third parties (GitHub, Stripe, Alertmanager, …) POST to the inbox URL; each payload becomes one line here.</p>
  ${formProblem(state, "inbox")}
  <div class="row"><form method="post" action="/notes/${note.id}/inbox/rotate">${csrfField(s)}<button class="primary">${note.inboxTokenHash ? "Rotate the inbox URL" : "Create an inbox URL"}</button></form>
  ${note.inboxTokenHash ? html`<form method="post" action="/notes/${note.id}/inbox/disable">${csrfField(s)}<button class="danger">Turn the inbox off</button></form>` : ""}</div>
  ${note.inboxTokenHash ? html`<p class="muted small">The URL is shown once, when it is made; rotating makes a new one and the old one stops working at once.</p>` : ""}
  ${
    recent.length
      ? html`<h3 class="small muted">Recent payloads</h3><table class="cards"><thead><tr><th>Received</th><th>Status</th><th>Line</th></tr></thead><tbody>${recent.map(
          (d) => html`<tr><td data-label="Received">${when(d.received_at)}</td><td data-label="Status">${d.status}</td><td data-label="Line" class="small mono">${d.line ?? d.last_error ?? ""}</td></tr>`,
        )}</tbody></table>`
      : ""
  }
  <h3 class="small muted">Dead letters</h3>${formProblem(state, "replay")}${
    dead.length
      ? html`<table class="cards"><thead><tr><th>Received</th><th>Why</th><th><span class="sr-only">Action</span></th></tr></thead><tbody>${dead.map(
          (d, i) =>
            html`<tr><td data-label="Received">${when(d.received_at)}</td><td data-label="Why" class="small">${d.last_error ?? ""}</td><td data-label=""><form method="post" action="/notes/${note.id}/inbox/${d.id}/replay">${csrfField(s)}<button aria-label="${replayNames[i]!}">Replay</button></form></td></tr>`,
        )}</tbody></table>`
      : html`<p class="muted small">None: every payload reached the note.</p>`
  }
</div>`;
}

/** What happens at the size cap (refuse, or drop the oldest lines) and removal by age. */
async function retentionCard(s: WebSession, note: NoteRow, state: FormState | undefined): Promise<Html> {
  const cap = bodyCapFor(tierOf(s.ctx.deps, await getWorkspace(s.ctx.deps, note.workspaceId)), "plain");
  const retention = typed(state, "retention", "retention", note.retention);
  return html`<div class="card"><h2>When it is full ${fullBadge(note)}</h2>
  ${note.fullSince !== null ? html`<div class="flash error">New lines are being refused since ${when(iso(note.fullSince))}: the stream is at its size cap. Drop the oldest lines, or free space, to take lines again.</div>` : ""}
  <p class="small">A stream holds up to ${cap === null ? "any size" : bytes(cap)}. At that size it can refuse new lines (and mail you once), or drop its oldest lines to make room. Lines can also go once they are older than a number of days.</p>
  ${formProblem(state, "retention")}
  <form method="post" action="/notes/${note.id}/retention">${csrfField(s)}
    <div class="row"><label class="grow"><span>At the size cap</span><select name="retention"${invalid(state, "retention", "retention")}><option value="reject" ${retention === "reject" ? raw("selected") : ""}>refuse new lines</option><option value="drop_oldest" ${retention === "drop_oldest" ? raw("selected") : ""}>drop the oldest lines</option></select>${fieldProblem(state, "retention", "retention")}</label>
    <label><span>Remove lines older than (days; empty keeps them)</span><input type="number" name="retention_days" min="1" max="${MAX_RETENTION_DAYS}" value="${typed(state, "retention", "retention_days", note.retentionDays === null ? "" : String(note.retentionDays))}"${invalid(state, "retention", "retention_days")}>${fieldProblem(state, "retention", "retention_days")}</label></div>
    <div class="row"><button class="primary">Save</button></div>
  </form>
</div>`;
}

/** The interval as the form shows it: whole hours in hours, anything else in minutes. */
function intervalFields(seconds: number | null): { every: string; unit: "hours" | "minutes" } {
  if (!seconds) return { every: "", unit: "hours" };
  return seconds % 3600 === 0 ? { every: String(seconds / 3600), unit: "hours" } : { every: String(Math.round(seconds / 60)), unit: "minutes" };
}

/**
 * The dead-man's switch. Where the plan has none it is shown, disabled, with the plans that have
 * it, rather than offered and then refused; a switch armed before a change of plan can still be
 * turned off.
 */
const deadmanAvailable = async (deps: Deps, note: NoteRow) => tierOf(deps, await getWorkspace(deps, note.workspaceId)).deadman;

async function deadmanCard(deps: Deps, s: WebSession, note: NoteRow, state: FormState | undefined): Promise<Html> {
  const available = await deadmanAvailable(deps, note);
  const stored = intervalFields(note.expectedIntervalSeconds);
  const every = typed(state, "deadman", "every", stored.every);
  const unit = typed(state, "deadman", "unit", stored.unit);
  const armed = note.expectedIntervalSeconds !== null || note.schedule !== null;
  const fields = html`<div class="row"><label class="grow"><span>Expect a write at least every${note.schedule === null ? "" : " (empty: by the schedule below)"}</span><input type="number" name="every" min="1" step="any" value="${every}"${invalid(state, "deadman", "every")}>${fieldProblem(state, "deadman", "every")}</label>
    <label><span>Unit</span><select name="unit"${invalid(state, "deadman", "unit")}><option value="hours" ${unit === "hours" ? raw("selected") : ""}>hours</option><option value="minutes" ${unit === "minutes" ? raw("selected") : ""}>minutes</option></select>${fieldProblem(state, "deadman", "unit")}</label></div>
    <label><span>Send alerts to (empty: your account address)</span><input type="email" name="alert_email" value="${typed(state, "deadman", "alert_email", note.alertEmail ?? "")}"${invalid(state, "deadman", "alert_email")}>${fieldProblem(state, "deadman", "alert_email")}</label>
    <label><span>A run may take at most, in minutes (after an append with status start, e.g. from notestream run; empty: no limit)</span><input type="number" name="max_run_minutes" min="1" step="any" value="${typed(state, "deadman", "max_run_minutes", note.maxRunSeconds === null ? "" : String(+(note.maxRunSeconds / 60).toFixed(2)))}"${invalid(state, "deadman", "max_run_minutes")}>${fieldProblem(state, "deadman", "max_run_minutes")}</label>
    <label class="check"><input type="checkbox" name="alert_webhook" value="yes" ${(state ? typed(state, "deadman", "alert_webhook", "") === "yes" : note.alertWebhook) ? raw("checked") : ""}> Also post alerts to this stream's webhook (in its chat format)</label>`;
  const badge =
    note.deadmanStatus === "late"
      ? html`<span class="badge late">late</span>`
      : note.deadmanStatus === "failing"
        ? html`<span class="badge late">failing</span>`
        : note.deadmanStatus === "ok"
          ? html`<span class="badge ok">watching</span>`
          : note.deadmanStatus === "paused"
            ? html`<span class="badge paused">paused</span>`
            : "";
  if (!available) {
    const plans = plansWithDeadman(deps.config.limitProfile);
    return html`<div class="card gated"><h2>Alert when it goes quiet ${badge}</h2>
  <p class="small">If no line arrives within the interval, we mail once; and once more when lines come back.</p>
  <p class="gate" id="deadman-gate"><strong>Available on ${plans}.</strong> <a href="/settings">See your plan</a>.</p>
  ${formProblem(state, "deadman")}${formProblem(state, "test-alert")}<form method="post" action="/notes/${note.id}/deadman" aria-describedby="deadman-gate">${csrfField(s)}<fieldset class="group" disabled>${fields}<div class="row"><button class="primary">Save</button></div></fieldset></form>
  ${armed ? html`<form method="post" action="/notes/${note.id}/deadman">${csrfField(s)}<p class="small">This stream still has an alert set from before: <button name="off" value="yes">Turn it off</button></p></form>` : ""}
</div>`;
  }
  return html`<div class="card"><h2>Alert when it goes quiet ${badge}</h2>
  <p class="small">If no line arrives within the interval, we mail once; and once more when lines come back. An append with status fail alerts at once. Last write: ${when(iso(note.lastWriteAt))}${note.lastRunMs === null ? "" : html`; the last run took ${Math.round(note.lastRunMs / 1000)} s`}.</p>
  ${formProblem(state, "deadman")}
  <form method="post" action="/notes/${note.id}/deadman">${csrfField(s)}
    ${fields}
    <div class="row"><button class="primary">Save</button>${armed ? html`<button name="off" value="yes">Turn off</button>` : ""}</div>
  </form>
  ${formProblem(state, "test-alert")}${
    armed
      ? html`<div class="mt10"><form method="post" action="/notes/${note.id}/deadman/test" class="row">${csrfField(s)}<button>Send a test alert</button><span class="muted small">Mails the alert, marked as a test, to ${s.account.email}.</span></form></div>`
      : ""
  }
</div>`;
}

/** "1 minute", "90 seconds", "2 hours": the switch's shortest interval, as the form says it. */
export function duration(seconds: number): string {
  if (seconds % 3600 === 0) return seconds === 3600 ? "1 hour" : `${seconds / 3600} hours`;
  if (seconds % 60 === 0) return seconds === 60 ? "1 minute" : `${seconds / 60} minutes`;
  return `${seconds} seconds`;
}
